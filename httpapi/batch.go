package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/custody-mem/custody"
)

// DefaultMaxBatchBytes bounds the body of POST /v1/memories/batch: a
// thousand candidates of a kilobyte each, with room to spare.
const DefaultMaxBatchBytes int64 = 16 << 20

// BatchRequest is the body of POST /v1/memories/batch: candidates of one
// caller, each as POST /v1/memories takes it.
type BatchRequest struct {
	Subject string          `json:"subject,omitempty" doc:"the user the writes are for; required for agent principals. An item may repeat it but not name another"`
	Items   []MemoryRequest `json:"items" doc:"1 to 1000 candidates, decided one by one in this order and committed together"`
}

// BatchResponse is the answer of POST /v1/memories/batch: one decision
// per item, in the order of the items.
type BatchResponse struct {
	Items []*custody.Decision `json:"items"`
}

// batchEnvelope is BatchRequest with the items left undecoded, so that
// an item that does not decode can be named by its index.
type batchEnvelope struct {
	Subject string            `json:"subject,omitempty"`
	Items   []json.RawMessage `json:"items"`
}

func (s *Server) rememberBatch(w http.ResponseWriter, r *http.Request) error {
	var env batchEnvelope
	if err := decodeJSON(w, r, s.opts.MaxBatchBytes, &env, false); err != nil {
		return err
	}
	if len(env.Items) > custody.MaxBatch {
		return badRequest("invalid_input", "items", fmt.Sprintf("a batch holds at most %d items and this one has %d; send it in parts of %d", custody.MaxBatch, len(env.Items), custody.MaxBatch))
	}
	subject, err := subjectOf(r, env.Subject)
	if err != nil {
		return err
	}
	cands := make([]custody.Candidate, len(env.Items))
	for i, raw := range env.Items {
		var req MemoryRequest
		if err := decodeBytes(raw, &req, false); err != nil {
			return itemError(i, err)
		}
		if req.Subject != "" && req.Subject != subject {
			return itemError(i, badRequest("invalid_input", "subject", "an item may not name another subject than the batch's; send one batch per subject"))
		}
		c, err := req.candidate()
		if err != nil {
			return itemError(i, err)
		}
		cands[i] = c
	}
	c, err := s.caller(r, subject)
	if err != nil {
		return err
	}
	ds, err := s.svc.RememberBatch(r.Context(), c, cands)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, BatchResponse{Items: ds})
	return nil
}

// Candidate turns a POST /v1/memories body into the domain's candidate,
// as the server does (an expires_at that is not RFC 3339 is invalid
// input), for tools that submit such bodies to a Service directly.
func Candidate(m MemoryRequest) (custody.Candidate, error) {
	c, err := m.candidate()
	var ae *apiError
	if errors.As(err, &ae) {
		return c, &custody.Error{Kind: custody.ErrInvalid, Field: ae.field, Msg: ae.message}
	}
	return c, err
}

// itemError names item i in a request error, as the domain does for the
// items it refuses (custody.ItemError): field items[i].field, message
// prefixed with it.
func itemError(i int, err error) error {
	var ae *apiError
	if !errors.As(err, &ae) {
		return custody.ItemError(i, err)
	}
	field := fmt.Sprintf("items[%d]", i)
	if ae.field != "" {
		field += "." + ae.field
	}
	return &apiError{status: ae.status, code: ae.code, field: field, message: field + ": " + ae.message}
}
