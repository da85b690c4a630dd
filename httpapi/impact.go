package httpapi

import (
	"net/http"

	"github.com/custody-mem/custody"
)

// sessionParam records a read in a session the caller opened.
var sessionParam = param{name: "session", doc: "a session the caller opened: the ids the read returned are recorded for the impact of a later repair"}

func (s *Server) impactRoutes() []route {
	return []route{
		{method: "GET", path: "/v1/memories/{id}/impact", summary: "What a memory reached: descendants, sessions that read it, gate decisions that relied on it (reviewer/admin)", tag: "repair",
			query: []param{subjectParam}, status: 200, response: custody.Impact{}, errors: []int{403, 404},
			notFound: "memory not found, or the caller is not a reviewer or admin of its tenant", handler: s.impact},
	}
}

func (s *Server) impact(w http.ResponseWriter, r *http.Request) error {
	c, id, err := s.recordCaller(r)
	if err != nil {
		return err
	}
	imp, err := s.svc.Impact(r.Context(), c, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, imp)
	return nil
}
