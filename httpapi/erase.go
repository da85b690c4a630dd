package httpapi

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/custody-mem/custody"
)

// EraseRequest is the optional body of a subject's erasure request.
type EraseRequest struct {
	Reason  string `json:"reason,omitempty" doc:"why, kept in the log (an erasure request's reference)"`
	Subject string `json:"subject,omitempty"`
}

func (s *Server) eraseRoutes() []route {
	return []route{
		{method: "DELETE", path: "/v1/memories/{id}", summary: "The owner retires a memory of its own (erase=true: erases its body too)", tag: "memories",
			query: []param{{name: "erase", doc: "true erases the body and its salt as well (the log keeps that the record existed and was erased); without it the record is retired: it leaves retrieval for good and keeps its body for history"},
				{name: "reason", doc: "why, kept in the receipt and the log"}, subjectParam},
			status: 200, response: AffectedResponse{}, errors: []int{403, 404, 409}, handler: s.forget},
		{method: "POST", path: "/v1/subjects/{name}/erase", summary: "Erase every memory body of a subject (admin, or the user itself), with a receipt", tag: "memories",
			request: EraseRequest{}, optionalBody: true, query: []param{subjectParam}, notFound: "subject not found",
			status: 200, response: custody.ErasureReceipt{}, errors: []int{403, 404}, handler: s.eraseSubject},
	}
}

func (s *Server) forget(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	erase := false
	if v := q.Get("erase"); v != "" {
		var err error
		if erase, err = strconv.ParseBool(v); err != nil {
			return badRequest("invalid_input", "erase", fmt.Sprintf("erase=%q must be true or false", v))
		}
	}
	c, id, err := s.recordCaller(r)
	if err != nil {
		return err
	}
	ids, err := s.svc.Forget(r.Context(), c, id, q.Get("reason"), erase)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, AffectedResponse{Affected: nonNil(ids)})
	return nil
}

func (s *Server) eraseSubject(w http.ResponseWriter, r *http.Request) error {
	var req EraseRequest
	if err := decodeJSON(w, r, s.opts.MaxBodyBytes, &req, true); err != nil {
		return err
	}
	c, err := s.callerFor(r, req.Subject)
	if err != nil {
		return err
	}
	rc, err := s.svc.EraseSubject(r.Context(), c, r.PathValue("name"), req.Reason)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rc)
	return nil
}
