package httpapi

import (
	"net/http"
)

// QuarantineRequest is the optional body of POST /v1/memories/{id}/quarantine.
type QuarantineRequest struct {
	Reason  string `json:"reason,omitempty" doc:"kept in the receipt and the log"`
	Subject string `json:"subject,omitempty"`
}

// RetireRequest is the optional body of POST /v1/memories/{id}/retire.
type RetireRequest struct {
	Reason  string `json:"reason,omitempty" doc:"kept in the receipt and the log"`
	Erase   bool   `json:"erase,omitempty" doc:"also remove the body and its search entry; the log keeps only its hash"`
	Subject string `json:"subject,omitempty"`
}

// RebuildRequest is the optional body of POST /v1/memories/{id}/rebuild.
type RebuildRequest struct {
	Body    string `json:"body,omitempty" doc:"write a new version from the surviving parents instead of re-admitting this one"`
	Subject string `json:"subject,omitempty"`
}

// AffectedResponse lists the ids a repair operation changed, the named
// record first.
type AffectedResponse struct {
	Affected []string `json:"affected"`
}

func (s *Server) quarantine(w http.ResponseWriter, r *http.Request) error {
	var req QuarantineRequest
	c, id, err := s.bodyCaller(w, r, &req, &req.Subject)
	if err != nil {
		return err
	}
	ids, err := s.svc.Quarantine(r.Context(), c, id, req.Reason)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, AffectedResponse{Affected: nonNil(ids)})
	return nil
}

func (s *Server) retire(w http.ResponseWriter, r *http.Request) error {
	var req RetireRequest
	c, id, err := s.bodyCaller(w, r, &req, &req.Subject)
	if err != nil {
		return err
	}
	ids, err := s.svc.Retire(r.Context(), c, id, req.Reason, req.Erase)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, AffectedResponse{Affected: nonNil(ids)})
	return nil
}

func (s *Server) rebuild(w http.ResponseWriter, r *http.Request) error {
	var req RebuildRequest
	c, id, err := s.bodyCaller(w, r, &req, &req.Subject)
	if err != nil {
		return err
	}
	ids, err := s.svc.Rebuild(r.Context(), c, id, req.Body)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, AffectedResponse{Affected: nonNil(ids)})
	return nil
}
