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
	body, err := readBody(w, r, s.opts.MaxBatchBytes)
	if err != nil {
		return err
	}
	// The body is decoded in one pass. One that does not decode is decoded
	// again item by item, which names the item at fault; the checks run in
	// the same order both ways, so the first problem is the one reported.
	var req BatchRequest
	if err := decodeBytes(body, &req, false); err != nil {
		if _, _, ierr := batchItems(r, body); ierr != nil {
			return ierr
		}
		return err
	}
	subject, cands, err := batchCandidates(r, req.Subject, len(req.Items), func(i int) (MemoryRequest, error) { return req.Items[i], nil })
	if err != nil {
		return err
	}
	c, err := s.caller(r, subject)
	if err != nil {
		return err
	}
	ds, err := s.svc.RememberBatch(r.Context(), c, cands)
	if err != nil {
		return err
	}
	writeDecisions(w, ds)
	return nil
}

// batchItems decodes body item by item, naming the first item that does
// not decode by its index, and checks the items as batchCandidates does.
func batchItems(r *http.Request, body []byte) (string, []custody.Candidate, error) {
	var env batchEnvelope
	if err := decodeBytes(body, &env, false); err != nil {
		return "", nil, err
	}
	return batchCandidates(r, env.Subject, len(env.Items), func(i int) (MemoryRequest, error) {
		var req MemoryRequest
		return req, decodeBytes(env.Items[i], &req, false)
	})
}

// batchCandidates checks a batch of n items, item(i) decoding the i-th,
// and returns its subject and candidates.
func batchCandidates(r *http.Request, batchSubject string, n int, item func(i int) (MemoryRequest, error)) (string, []custody.Candidate, error) {
	if n > custody.MaxBatch {
		return "", nil, badRequest("invalid_input", "items", fmt.Sprintf("a batch holds at most %d items and this one has %d; send it in parts of %d", custody.MaxBatch, n, custody.MaxBatch))
	}
	subject, err := subjectOf(r, batchSubject)
	if err != nil {
		return "", nil, err
	}
	cands := make([]custody.Candidate, n)
	for i := range n {
		req, err := item(i)
		if err != nil {
			return "", nil, itemError(i, err)
		}
		if req.Subject != "" && req.Subject != subject {
			return "", nil, itemError(i, badRequest("invalid_input", "subject", "an item may not name another subject than the batch's; send one batch per subject"))
		}
		c, err := req.candidate()
		if err != nil {
			return "", nil, itemError(i, err)
		}
		cands[i] = c
	}
	return subject, cands, nil
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
