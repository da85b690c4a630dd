package mem0api

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	custody "github.com/custody-mem/custody"
)

// scope is what a Mem0 filter selects, as custody filters applied inside
// the query: whose memories (the subject, and the user_id they were added
// for), with which entity ids and metadata, created when.
type scope struct {
	userID        string
	meta          custody.Metadata
	after, before *time.Time
	none          bool // the filter contradicts itself: nothing matches
}

const unsupported = "custody's Mem0 routes filter by user_id, agent_id, app_id and run_id (a value, or \"*\" for any but user_id), " +
	"metadata (string values), created_at (gte, gt, lte, lt) and AND of those, all inside the query; %s is not one of them: filter the results in your code"

// parseFilters reads a Mem0 filter object ({"user_id": "alice"},
// {"AND": [...]}, operators as objects).
func parseFilters(raw json.RawMessage) (*scope, error) {
	s := &scope{meta: custody.Metadata{}}
	if len(raw) == 0 || string(raw) == "null" {
		return s, nil
	}
	var f map[string]json.RawMessage
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, invalid("filters", "filters must be a JSON object such as {\"user_id\": \"alice\"}")
	}
	return s, s.add(f, 0)
}

func (s *scope) add(f map[string]json.RawMessage, depth int) error {
	if depth > 8 {
		return invalid("filters", "filters nest deeper than 8 ANDs; flatten them")
	}
	keys := make([]string, 0, len(f))
	for k := range f {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := f[k]
		switch k {
		case "AND":
			var all []map[string]json.RawMessage
			if err := json.Unmarshal(v, &all); err != nil {
				return invalid("filters", "AND takes an array of filter objects")
			}
			for _, sub := range all {
				if err := s.add(sub, depth+1); err != nil {
					return err
				}
			}
		case "user_id", "agent_id", "app_id", "run_id":
			if err := s.entity(k, v); err != nil {
				return err
			}
		case "created_at":
			if err := s.created(v); err != nil {
				return err
			}
		case "metadata":
			var m map[string]any
			if err := json.Unmarshal(v, &m); err != nil {
				return invalid("filters", "metadata takes an object of string values, e.g. {\"topic\": \"travel\"}")
			}
			for mk, mv := range m {
				str, ok := mv.(string)
				if !ok || !mirrorable(mk) {
					return invalid("filters", unsupported, fmt.Sprintf("metadata.%s (a non-string value, or a key outside a-z 0-9 _ . -)", mk))
				}
				s.equal(mk, str)
			}
		default:
			return invalid("filters", unsupported, k)
		}
	}
	return nil
}

func (s *scope) entity(k string, v json.RawMessage) error {
	var id string
	if err := json.Unmarshal(v, &id); err != nil {
		return invalid("filters", unsupported, k+" "+string(v))
	}
	if id == "*" {
		if k == "user_id" {
			return invalid("filters", "user_id \"*\": custody reads one user's memories at a time; name the user")
		}
		return nil
	}
	if k == "user_id" {
		if s.userID != "" && s.userID != id {
			s.none = true
		}
		s.userID = id
	}
	s.equal("mem0."+k, id)
	return nil
}

func (s *scope) equal(k, v string) {
	if w, ok := s.meta[k]; ok && w != v {
		s.none = true
	}
	s.meta[k] = v
}

func (s *scope) created(v json.RawMessage) error {
	var ops map[string]string
	if err := json.Unmarshal(v, &ops); err != nil {
		return invalid("filters", "created_at takes {\"gte\"|\"gt\"|\"lte\"|\"lt\": \"2026-01-31T00:00:00Z\"}")
	}
	for op, at := range ops {
		t, err := time.Parse(time.RFC3339Nano, at)
		if err != nil {
			if d, derr := time.Parse("2006-01-02", at); derr == nil {
				t = d
			} else {
				return invalid("filters", "created_at %s %q is not an RFC 3339 time or a date (2026-01-31)", op, at)
			}
		}
		switch op {
		case "gt":
		case "gte":
			t = t.Add(-time.Nanosecond)
		case "lt":
		case "lte":
			t = t.Add(time.Nanosecond)
		default:
			return invalid("filters", unsupported, "created_at "+op)
		}
		if op == "gt" || op == "gte" {
			if s.after == nil || t.After(*s.after) {
				s.after = &t
			}
		} else if s.before == nil || t.Before(*s.before) {
			s.before = &t
		}
	}
	return nil
}

// mirrorable reports whether a key of the caller's metadata is kept as a
// custody metadata key too (so that filters on it apply inside the query):
// a custody metadata key that is not an adapter's mark.
func mirrorable(k string) bool {
	if len(k) == 0 || len(k) > custody.MaxMetadataKeyBytes || custody.AdapterMark(custody.Metadata{k: ""}) != "" {
		return false
	}
	return !strings.ContainsFunc(k, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-')
	})
}

// filters are the custody filters of a scope, with the mark of Mem0 memories.
func (s *scope) filters() custody.Filters {
	m := custody.Metadata{metaMemory: "1"}
	for k, v := range s.meta {
		m[k] = v
	}
	return custody.Filters{KeyPrefix: keyPrefix, Metadata: m, CreatedAfter: s.after, CreatedBefore: s.before}
}
