package memgraph

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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
// observation belongs to its entity by name, so that writers who create an
// entity and add to it at once lose nothing; deleting an entity deletes its
// observations, so a new entity of the same name starts without them.
type entityBody struct {
	Name       string `json:"name"`
	EntityType string `json:"entityType"`
	Deleted    bool   `json:"deleted,omitempty"`
}

type obsBody struct {
	Entity  string `json:"entity"`
	Content string `json:"content"`
	Deleted bool   `json:"deleted,omitempty"`
}

type relationBody struct {
	Relation
	Deleted bool `json:"deleted,omitempty"`
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
// unique by a hash of what identifies the record.
func entityKey(name string) string { return "e:" + slug(name, 64) + ":" + digest(name) }

func obsKey(name, content string) string {
	return "o:" + slug(name, 48) + ":" + digest(name, content)
}

func relationKey(r Relation) string {
	return "r:" + slug(r.RelationType, 40) + ":" + digest(r.From, r.To, r.RelationType)
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
