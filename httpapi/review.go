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
