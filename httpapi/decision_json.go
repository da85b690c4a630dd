package httpapi

import (
	"net/http"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/custody-mem/custody"
)

// Decisions are the answer of every write, a thousand at a time for a
// batch, and encoding them by reflection (the receipt's inputs a sorted
// map) was a tenth of a batch's work outside the writer. appendDecision
// writes what encoding/json writes for a decision, byte for byte
// (decision_json_test.go compares the two).

// writeDecisions writes the answer of POST /v1/memories/batch, as
// writeJSON writes BatchResponse{Items: ds}.
func writeDecisions(w http.ResponseWriter, ds []*custody.Decision) {
	b := make([]byte, 0, 64+len(ds)*768)
	b = append(b, `{"items":`...)
	if ds == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, d := range ds {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendDecision(b, d); !ok {
				writeJSON(w, http.StatusOK, BatchResponse{Items: ds}) // and its error
				return
			}
		}
		b = append(b, ']')
	}
	writeJSONBytes(w, http.StatusOK, append(b, '}'))
}

// writeDecision writes one decision with status, as writeJSON writes it.
func writeDecision(w http.ResponseWriter, status int, d *custody.Decision) {
	b, ok := appendDecision(make([]byte, 0, 768), d)
	if !ok {
		writeJSON(w, status, d) // and its error
		return
	}
	writeJSONBytes(w, status, b)
}

// appendDecision appends d as encoding/json marshals it, or reports false
// where encoding/json fails (a receipt's time past the year 9999).
func appendDecision(b []byte, d *custody.Decision) ([]byte, bool) {
	if d == nil {
		return append(b, "null"...), true
	}
	b = append(b, `{"id":`...)
	b = appendJSONString(b, d.ID)
	b = append(b, `,"state":`...)
	b = appendJSONString(b, string(d.State))
	b = append(b, `,"authority":`...)
	b = appendJSONString(b, d.Authority.String())
	b = append(b, `,"reason":`...)
	b = appendJSONString(b, d.Reason)
	b = append(b, `,"receipt":`...)
	b, ok := appendReceipt(b, d.Receipt)
	b = append(b, `,"log_index":`...)
	b = strconv.AppendUint(b, d.LogIndex, 10)
	return append(b, '}'), ok
}

// appendReceipt appends r as encoding/json marshals it (false: it fails).
func appendReceipt(b []byte, r *custody.Receipt) ([]byte, bool) {
	if r == nil {
		return append(b, "null"...), true
	}
	b = append(b, `{"decision":`...)
	b = appendJSONString(b, string(r.Decision))
	b = append(b, `,"policy_version":`...)
	b = appendJSONString(b, r.PolicyVersion)
	b = append(b, `,"rules":`...)
	if r.Rules == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, rule := range r.Rules {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, rule)
		}
		b = append(b, ']')
	}
	b = append(b, `,"reason":`...)
	b = appendJSONString(b, r.Reason)
	if len(r.Inputs) > 0 {
		b = append(b, `,"inputs":{`...)
		keys := make([]string, 0, len(r.Inputs))
		for k := range r.Inputs {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			b = appendJSONString(b, r.Inputs[k])
		}
		b = append(b, '}')
	}
	if r.Error != "" {
		b = append(b, `,"error":`...)
		b = appendJSONString(b, r.Error)
	}
	b = append(b, `,"actor":`...)
	b = appendJSONString(b, r.Actor)
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

const hexDigits = "0123456789abcdef"

// appendJSONString appends src quoted as encoding/json quotes a string:
// HTML characters escaped, invalid UTF-8 as U+FFFD, U+2028 and U+2029
// escaped.
func appendJSONString(dst []byte, src string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(src); {
		if c := src[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			dst = append(dst, src[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(src[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, src[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, src[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, src[start:]...)
	return append(dst, '"')
}
