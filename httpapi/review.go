package httpapi

import (
	"net/http"

	"github.com/custody-mem/custody"
)

// ReviewResponse is one page of the review queue, oldest first: each
// quarantined candidate with, for keyed records, the value it would replace.
type ReviewResponse struct {
	Items      []custody.ReviewItem `json:"items"`
	NextCursor string               `json:"next_cursor"`
}

// ApproveRequest is the optional body of POST /v1/review/{id}/approve.
type ApproveRequest struct {
	Reason  string `json:"reason,omitempty" doc:"why the reviewer admits it; kept in the receipt and the log"`
	Subject string `json:"subject,omitempty"`
}

// RejectRequest is the optional body of POST /v1/review/{id}/reject.
type RejectRequest struct {
	Reason  string `json:"reason,omitempty" doc:"kept in the receipt and the log"`
	Subject string `json:"subject,omitempty"`
}

// ChangedResponse lists the ids whose state changed.
type ChangedResponse struct {
	Changed []string `json:"changed"`
}

func (s *Server) reviewQueue(w http.ResponseWriter, r *http.Request) error {
	c, err := s.queryCaller(r)
	if err != nil {
		return err
	}
	limit, err := queryInt(r, "limit")
	if err != nil {
		return err
	}
	items, next, err := s.svc.ReviewQueue(r.Context(), c, r.URL.Query().Get("cursor"), limit)
	if err != nil {
		return err
	}
	if items == nil {
		items = []custody.ReviewItem{}
	}
	for _, it := range items {
		wireRecord(it.Record)
	}
	writeJSON(w, http.StatusOK, ReviewResponse{Items: items, NextCursor: next})
	return nil
}

func (s *Server) approve(w http.ResponseWriter, r *http.Request) error {
	var req ApproveRequest
	c, id, err := s.bodyCaller(w, r, &req, &req.Subject)
	if err != nil {
		return err
	}
	rec, err := s.svc.ApproveBecause(r.Context(), c, id, req.Reason)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wireRecord(rec))
	return nil
}

func (s *Server) reject(w http.ResponseWriter, r *http.Request) error {
	var req RejectRequest
	c, id, err := s.bodyCaller(w, r, &req, &req.Subject)
	if err != nil {
		return err
	}
	rec, err := s.svc.Reject(r.Context(), c, id, req.Reason)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wireRecord(rec))
	return nil
}

func (s *Server) reevaluate(w http.ResponseWriter, r *http.Request) error {
	var req SubjectRequest
	if err := decodeJSON(w, r, s.opts.MaxBodyBytes, &req, true); err != nil {
		return err
	}
	c, err := s.callerFor(r, req.Subject)
	if err != nil {
		return err
	}
	changed, err := s.svc.Reevaluate(r.Context(), c)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ChangedResponse{Changed: nonNil(changed)})
	return nil
}

func nonNil(ids []string) []string {
	if ids == nil {
		return []string{}
	}
	return ids
}

// DecisionsResponse is a page of the caller's own decisions, newest first.
type DecisionsResponse struct {
	Items      []custody.DecisionEntry `json:"items"`
	NextBefore uint64                  `json:"next_before" doc:"pass as before= for the older ones; 0 when the log's beginning was reached"`
}

// VersionsResponse is the versions of a key, oldest first, the one in
// force marked.
type VersionsResponse struct {
	Items []custody.KeyVersion `json:"items"`
}

func (s *Server) reviewRoutes() []route {
	return []route{
		{method: "GET", path: "/v1/review/{id}/versions", summary: "The versions of the key of a record under review, the one in force marked (reviewer, policy_owner, admin)", tag: "review",
			query: []param{subjectParam}, status: 200, response: VersionsResponse{}, errors: []int{403, 404}, handler: s.reviewVersions},
		{method: "GET", path: "/v1/decisions", summary: "The caller's own decisions (approve, reject, confirm, repair, confirmed actions), newest first, from the log", tag: "review",
			query:  []param{{name: "before", doc: "only log entries before this index (next_before of the previous page)", integer: true}, subjectParam, limitParam},
			status: 200, response: DecisionsResponse{}, errors: []int{403}, handler: s.decisions},
		{method: "GET", path: "/v1/confirmations", summary: "The owner's writes waiting for her confirmation, with the value in force each would replace (the owner's user credential only)", tag: "review",
			query: []param{limitParam, cursorParam}, status: 200, response: ConfirmationsResponse{}, errors: []int{403}, handler: s.confirmations},
		{method: "GET", path: "/v1/held", summary: "The owner's writes held for review or pending, with why, without bodies (the owner's user credential only)", tag: "review",
			query: []param{limitParam, cursorParam}, status: 200, response: ListResponse{}, errors: []int{403}, handler: s.held},
		{method: "GET", path: "/v1/me", summary: "The principal the token names: tenant, name, roles, channels and groups", tag: "principals",
			status: 200, response: MeResponse{}, handler: s.me},
	}
}

func (s *Server) reviewVersions(w http.ResponseWriter, r *http.Request) error {
	c, id, err := s.recordCaller(r)
	if err != nil {
		return err
	}
	vs, err := s.svc.ReviewVersions(r.Context(), c, id)
	if err != nil {
		return err
	}
	if vs == nil {
		vs = []custody.KeyVersion{}
	}
	for _, v := range vs {
		wireRecord(v.Record)
	}
	writeJSON(w, http.StatusOK, VersionsResponse{Items: vs})
	return nil
}

func (s *Server) decisions(w http.ResponseWriter, r *http.Request) error {
	c, err := s.queryCaller(r)
	if err != nil {
		return err
	}
	limit, err := queryInt(r, "limit")
	if err != nil {
		return err
	}
	before, err := queryInt(r, "before")
	if err != nil {
		return err
	}
	if before < 0 {
		return badRequest("invalid_input", "before", "before must be a log index (0 or more); pass next_before of the previous page")
	}
	items, next, err := s.svc.Decisions(r.Context(), c, uint64(before), limit)
	if err != nil {
		return err
	}
	for _, d := range items {
		wireRecord(d.Record)
	}
	writeJSON(w, http.StatusOK, DecisionsResponse{Items: items, NextBefore: next})
	return nil
}
