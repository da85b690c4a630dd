package memgraph

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"

	custody "github.com/custody-mem/custody"
)

// The namespaces under the graph's root, one per kind of record.
const (
	nsEntities     = "entities"
	nsObservations = "observations"
	nsRelations    = "relations"
)

// The bodies of the records. A deletion is a version with Deleted set. An
// observation belongs to its entity by name (and, when one call created
// several entities of that name, by its occurrence), so that writers who
// create an entity and add to it at once lose nothing; deleting an entity
// deletes its observations, so a new entity of the same name starts
// without them. The reference server keeps what one call repeats (two
// entities of one name, an observation twice, a relation twice): each
// repetition is a record of its own, numbered by Occurrence.
type entityBody struct {
	Name       string `json:"name"`
	EntityType string `json:"entityType"`
	Occurrence int    `json:"occurrence,omitempty"`
	Deleted    bool   `json:"deleted,omitempty"`
}

type obsBody struct {
	Entity           string `json:"entity"`
	EntityOccurrence int    `json:"entityOccurrence,omitempty"`
	Content          string `json:"content"`
	Occurrence       int    `json:"occurrence,omitempty"`
	Deleted          bool   `json:"deleted,omitempty"`
}

type relationBody struct {
	Relation
	Occurrence int  `json:"occurrence,omitempty"`
	Deleted    bool `json:"deleted,omitempty"`
}

func encode(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // plain structs of strings and bools
	return strings.TrimSuffix(b.String(), "\n")
}

func decode(r *custody.Record, v any) bool {
	return json.Unmarshal([]byte(r.Body), v) == nil
}

// Keys are readable where they can be (the entity's name, so that the
// admission policy's sensitive-key patterns see "payee" or "password") and
// unique by a hash of what identifies the record; a repetition's key ends
// in its occurrence (.1, .2, ...).
func entityKey(name string, occ int) string {
	return "e:" + slug(name, 64) + ":" + digest(name) + occurrence(occ)
}

func obsKey(name string, entityOcc int, content string, occ int) string {
	parts := []string{name, content}
	if entityOcc > 0 {
		parts = append(parts, "#"+strconv.Itoa(entityOcc))
	}
	return "o:" + slug(name, 48) + ":" + digest(parts...) + occurrence(occ)
}

func relationKey(r Relation, occ int) string {
	return "r:" + slug(r.RelationType, 40) + ":" + digest(r.From, r.To, r.RelationType) + occurrence(occ)
}

func occurrence(n int) string {
	if n == 0 {
		return ""
	}
	return "." + strconv.Itoa(n)
}

func digest(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:24]
}

// slug keeps the key characters of s, lower-cased, others as _.
func slug(s string, max int) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if b.Len() >= max {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_', r == '.', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}
