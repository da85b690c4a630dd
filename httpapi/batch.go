package httpapi

import (
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

func (s *Server) rememberBatch(w http.ResponseWriter, r *http.Request) error {
	// Decoded as it arrives, each item checked before the next is read
	// (batch_stream.go).
	subject, cands, err := s.decodeBatch(w, r)
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
	named := *ae
	named.field, named.message = field, field+": "+ae.message
	return &named
}
