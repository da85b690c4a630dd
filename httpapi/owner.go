package httpapi

import (
	"net/http"

	"github.com/custody-mem/custody"
)

// ConfirmationsResponse is a page of the owner's writes waiting for her
// confirmation, oldest first.
type ConfirmationsResponse struct {
	Items      []custody.PendingItem `json:"items"`
	NextCursor string                `json:"next_cursor"`
}

// ConfirmRequest is the optional body of POST /v1/memories/{id}/confirm.
type ConfirmRequest struct {
	Reason  string `json:"reason,omitempty" doc:"why the owner puts it in force; kept in the receipt and the log"`
	Subject string `json:"subject,omitempty"`
}

// MeResponse is the principal a token names.
type MeResponse struct {
	Tenant   string   `json:"tenant"`
	Name     string   `json:"name"`
	Roles    []string `json:"roles"`
	Channels []string `json:"channels"`
	Groups   []string `json:"groups"`
}

func (s *Server) me(w http.ResponseWriter, r *http.Request) error {
	p := PrincipalFrom(r.Context())
	if p == nil {
		return custody.ErrUnauthenticated
	}
	if r.URL.Query().Has("subject") { // a subject named is checked, as everywhere
		if _, err := s.queryCaller(r); err != nil {
			return err
		}
	}
	nz := func(ss []string) []string {
		if ss == nil {
			return []string{}
		}
		return ss
	}
	writeJSON(w, http.StatusOK, MeResponse{Tenant: p.Tenant, Name: p.Name, Roles: nz(p.Roles), Channels: nz(p.Channels), Groups: nz(p.Groups)})
	return nil
}

func (s *Server) confirmations(w http.ResponseWriter, r *http.Request) error {
	c, err := s.queryCaller(r)
	if err != nil {
		return err
	}
	limit, err := queryInt(r, "limit")
	if err != nil {
		return err
	}
	items, next, err := s.svc.AwaitingConfirmation(r.Context(), c, r.URL.Query().Get("cursor"), limit)
	if err != nil {
		return err
	}
	for _, it := range items {
		wireRecord(it.Record)
		wireRecord(it.InForce)
	}
	writeJSON(w, http.StatusOK, ConfirmationsResponse{Items: items, NextCursor: next})
	return nil
}

func (s *Server) held(w http.ResponseWriter, r *http.Request) error {
	c, err := s.queryCaller(r)
	if err != nil {
		return err
	}
	limit, err := queryInt(r, "limit")
	if err != nil {
		return err
	}
	recs, next, err := s.svc.HeldForOwner(r.Context(), c, r.URL.Query().Get("cursor"), limit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ListResponse{Items: wireRecords(recs), NextCursor: next})
	return nil
}
