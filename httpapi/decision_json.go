package httpapi

import (
	"net/http"
	"strconv"

	"github.com/custody-mem/custody"
	"github.com/custody-mem/custody/internal/jsontext"
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
	b = jsontext.AppendString(b, d.ID)
	b = append(b, `,"state":`...)
	b = jsontext.AppendString(b, string(d.State))
	b = append(b, `,"authority":`...)
	b = jsontext.AppendString(b, d.Authority.String())
	b = append(b, `,"reason":`...)
	b = jsontext.AppendString(b, d.Reason)
	b = append(b, `,"receipt":`...)
	b, ok := d.Receipt.AppendJSON(b)
	b = append(b, `,"log_index":`...)
	b = strconv.AppendUint(b, d.LogIndex, 10)
	return append(b, '}'), ok
}
