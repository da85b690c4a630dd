package custody

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/cedar-policy/cedar-go/types"
)

// Metadata is a write's optional metadata: string keys and values, kept
// with the record, returned with it, filtered on by equality, readable by
// the admission policy (context.metadata), and covered by the record's
// log entry. It is data, never a control field: a key named "channel",
// "owner" or "state" is stored as metadata and changes nothing (design
// rule 1). It holds what the writer sent, so it may hold personal data: an
// erased record loses its metadata with its body.
type Metadata map[string]string

// Metadata bounds.
const (
	MaxMetadataKeys       = 16
	MaxMetadataKeyBytes   = 64
	MaxMetadataValueBytes = 512
	MaxMetadataBytes      = 4096 // keys and values together
)

var metadataKeyRE = regexp.MustCompile(`^[a-z0-9_.-]+$`)

// AdapterMarkPrefixes are the metadata key prefixes the adapters that
// write over the HTTP API use to mark their records (clients/langgraph's
// "langgraph." keys, mem0api's "mem0." keys): an adapter takes a record
// for one of its own only with these marks, never from its body. A
// model's own write (the MCP tool memory_remember) may not set them, so
// content a model was led to remember can never pass for an adapter's
// record.
var AdapterMarkPrefixes = []string{"langgraph.", "mem0."}

// AdapterMark returns the first key of m under an AdapterMarkPrefixes
// prefix, or "".
func AdapterMark(m Metadata) string {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		for _, p := range AdapterMarkPrefixes {
			if strings.HasPrefix(k, p) {
				return k
			}
		}
	}
	return ""
}

// ValidMetadata checks m against the bounds: at most MaxMetadataKeys keys
// of 1 to MaxMetadataKeyBytes bytes of [a-z0-9_.-], values of valid UTF-8
// with no control characters, at most MaxMetadataValueBytes each and
// MaxMetadataBytes in all.
func ValidMetadata(m Metadata) error {
	if len(m) > MaxMetadataKeys {
		return invalid("metadata", "metadata has %d keys; the limit is %d", len(m), MaxMetadataKeys)
	}
	total := 0
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		if len(k) > MaxMetadataKeyBytes || !metadataKeyRE.MatchString(k) {
			return invalid("metadata", "metadata key %q: give 1 to %d bytes of a-z, 0-9, '_', '.' or '-'", truncate(k, 80), MaxMetadataKeyBytes)
		}
		if len(v) > MaxMetadataValueBytes {
			return invalid("metadata", "metadata value of %q is %d bytes; the limit is %d", k, len(v), MaxMetadataValueBytes)
		}
		if !utf8.ValidString(v) || strings.ContainsFunc(v, isControl) {
			return invalid("metadata", "metadata value of %q holds invalid UTF-8 or a control character", k)
		}
		total += len(k) + len(v)
	}
	if total > MaxMetadataBytes {
		return invalid("metadata", "metadata is %d bytes of keys and values; the limit is %d", total, MaxMetadataBytes)
	}
	return nil
}

// ValidMetadataFilter checks equality filters on metadata: the keys as in
// ValidMetadata, values at most MaxMetadataValueBytes.
func ValidMetadataFilter(m Metadata) error {
	if len(m) > MaxMetadataKeys {
		return invalid("metadata", "%d metadata filters; the limit is %d", len(m), MaxMetadataKeys)
	}
	for k, v := range m {
		if len(k) > MaxMetadataKeyBytes || !metadataKeyRE.MatchString(k) {
			return invalid("metadata", "metadata filter key %q: give 1 to %d bytes of a-z, 0-9, '_', '.' or '-'", truncate(k, 80), MaxMetadataKeyBytes)
		}
		if len(v) > MaxMetadataValueBytes || !utf8.ValidString(v) || strings.ContainsFunc(v, isControl) {
			return invalid("metadata", "metadata filter value of %q: give UTF-8 text without control characters, at most %d bytes", k, MaxMetadataValueBytes)
		}
	}
	return nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return fmt.Sprintf("%s…", strings.ToValidUTF8(s[:n], ""))
}

// detailMetadata is the log detail that commits to a record's metadata.
const detailMetadata = "metadata"

// JSON is m's canonical encoding, keys sorted ("" for none): what the
// stores keep and the log commits to.
func (m Metadata) JSON() string {
	if len(m) == 0 {
		return ""
	}
	b, err := json.Marshal(map[string]string(m))
	if err != nil {
		panic(err) // a map of strings always marshals
	}
	return string(b)
}

// ParseMetadata reads what JSON wrote ("" is none).
func ParseMetadata(s string) (Metadata, error) {
	if s == "" {
		return nil, nil
	}
	var m Metadata
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	if len(m) == 0 {
		return nil, nil
	}
	return m, nil
}

// metadataCommitment is what a record's log entry holds of its metadata:
// the hex HMAC-SHA256, keyed with the record's salt as its body is
// (BodyHash), of the canonical JSON, so the log neither shows the metadata
// nor lets it be guessed, and verify catches any edit of it. None ("") for
// a record without metadata (so entries written before metadata verify as
// they are) and for an erased one.
func metadataCommitment(r *Record) string {
	if len(r.Metadata) == 0 || r.Erased {
		return ""
	}
	return hex.EncodeToString(BodyHash(r.Salt, "custody-metadata\x00"+r.Metadata.JSON()))
}

// cedar is m as the policy's context.metadata: a record of strings, empty
// when there is none (test with has: context.metadata has project).
func (m Metadata) cedar() types.Value {
	rm := make(types.RecordMap, len(m))
	for k, v := range m {
		rm[types.String(k)] = types.String(v)
	}
	return types.NewRecord(rm)
}
