package custody

import (
	"strconv"

	"github.com/custody-mem/custody/internal/jsontext"
)

// AppendJSON appends r as encoding/json marshals it, byte for byte ("null"
// for a nil receipt), without its reflection; false where encoding/json
// fails (a time past the year 9999). A receipt is written with every
// record and every write's answer, and its inputs are a map encoding/json
// sorts through reflection. httpapi/decision_json_test.go compares it
// with encoding/json on receipts with every field set or empty and
// strings of every kind of character JSON escapes.
func (r *Receipt) AppendJSON(b []byte) ([]byte, bool) {
	if r == nil {
		return append(b, "null"...), true
	}
	b = append(b, `{"decision":`...)
	b = jsontext.AppendString(b, string(r.Decision))
	b = append(b, `,"policy_version":`...)
	b = jsontext.AppendString(b, r.PolicyVersion)
	b = append(b, `,"rules":`...)
	b = jsontext.AppendStrings(b, r.Rules)
	b = append(b, `,"reason":`...)
	b = jsontext.AppendString(b, r.Reason)
	if len(r.Inputs) > 0 {
		b = append(b, `,"inputs":`...)
		b = jsontext.AppendStringMap(b, r.Inputs)
	}
	if r.Error != "" {
		b = append(b, `,"error":`...)
		b = jsontext.AppendString(b, r.Error)
	}
	b = append(b, `,"actor":`...)
	b = jsontext.AppendString(b, r.Actor)
	b = append(b, `,"time":`...)
	t, err := r.Time.MarshalJSON()
	if err != nil {
		return b, false
	}
	b = append(b, t...)
	b = append(b, `,"log_index":`...)
	b = strconv.AppendUint(b, r.LogIndex, 10)
	return append(b, '}'), true
}
