package sqlite

import (
	"strconv"

	"github.com/custody-mem/custody/internal/jsontext"
)

// appendReceipt appends s as encoding/json marshals it, byte for byte,
// without its reflection: a receipt is written with every record (and
// rewritten with every transition), and marshalling it by reflection was
// a tenth of a batch write's time on the writer's goroutine.
func appendReceipt(b []byte, s *storedReceipt) []byte {
	b = append(b, '{')
	first := true
	field := func(name string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, '"', ':')
	}
	if s.Decision != "" {
		field("decision")
		b = jsontext.AppendString(b, string(s.Decision))
	}
	if s.PolicyVersion != "" {
		field("policy_version")
		b = jsontext.AppendString(b, s.PolicyVersion)
	}
	field("rules")
	b = jsontext.AppendStrings(b, s.Rules)
	if s.Reason != "" {
		field("reason")
		b = jsontext.AppendString(b, s.Reason)
	}
	if len(s.Inputs) > 0 {
		field("inputs")
		b = jsontext.AppendStringMap(b, s.Inputs)
	}
	if s.Error != "" {
		field("error")
		b = jsontext.AppendString(b, s.Error)
	}
	if s.Actor != "" {
		field("actor")
		b = jsontext.AppendString(b, s.Actor)
	}
	if !s.Time.IsZero() {
		field("time")
		t, err := s.Time.MarshalJSON()
		if err != nil {
			panic(err) // as json.Marshal fails on it: a time past year 9999
		}
		b = append(b, t...)
	}
	if s.LogIndex != 0 {
		field("log_index")
		b = strconv.AppendUint(b, s.LogIndex, 10)
	}
	if s.Same != "" {
		field("same")
		b = jsontext.AppendString(b, s.Same)
	}
	return append(b, '}')
}
