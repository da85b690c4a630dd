package httpapi

import (
	"net/http"

	"github.com/custody-mem/custody"
)

// SessionRequest is the optional body of POST /v1/sessions.
type SessionRequest struct {
	Subject string `json:"subject,omitempty" doc:"the user the session acts for; required for agent principals"`
}

// ObservationRequest is the body of POST /v1/sessions/{id}/observations:
// one piece of content that entered the model's context.
type ObservationRequest struct {
	Channel   string `json:"channel" doc:"how the content arrived, e.g. tool:email; channels above external must be registered to the principal" example:"tool:web"`
	Text      string `json:"text"`
	SourceRef string `json:"source_ref,omitempty"`
	Subject   string `json:"subject,omitempty"`
}

func (s *Server) openSession(w http.ResponseWriter, r *http.Request) error {
	var req SessionRequest
	if err := decodeJSON(w, r, s.opts.MaxBodyBytes, &req, true); err != nil {
		return err
	}
	c, err := s.callerFor(r, req.Subject)
	if err != nil {
		return err
	}
	sess, err := s.svc.OpenSession(r.Context(), c)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, sess)
	return nil
}

func (s *Server) observe(w http.ResponseWriter, r *http.Request) error {
	var req ObservationRequest
	if err := decodeJSON(w, r, s.opts.MaxBodyBytes, &req, false); err != nil {
		return err
	}
	c, err := s.callerFor(r, req.Subject)
	if err != nil {
		return err
	}
	id, err := pathID(r)
	if err != nil {
		return err
	}
	sess, err := s.svc.Observe(r.Context(), c, id, custody.ObservationInput{Channel: req.Channel, Text: req.Text, SourceRef: req.SourceRef})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, sess)
	return nil
}
