package httpapi

import (
	"net/http"
	"time"

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

// EndorseRequest is the body of POST /v1/sessions/{id}/endorse: the user's
// word that values from a source of the session may back named actions.
type EndorseRequest struct {
	SourceRef string   `json:"source_ref" doc:"the source_ref of the session's observations the user names (the document of her request)" example:"file:address-change.txt"`
	Actions   []string `json:"actions" doc:"the actions values from the source may back, named exactly" example:"[\"update_user_info\"]"`
	Until     string   `json:"until,omitempty" format:"date-time" doc:"RFC 3339; the endorsement lapses then (default: with the session)"`
	Subject   string   `json:"subject,omitempty"`
}

func (s *Server) endorse(w http.ResponseWriter, r *http.Request) error {
	var req EndorseRequest
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
	in := custody.EndorseInput{SourceRef: req.SourceRef, Actions: req.Actions}
	if req.Until != "" {
		t, err := time.Parse(time.RFC3339Nano, req.Until)
		if err != nil {
			return badRequest("invalid_input", "until", "until must be an RFC 3339 time such as 2030-01-02T15:04:05Z")
		}
		in.Until = &t
	}
	e, err := s.svc.Endorse(r.Context(), c, id, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, e)
	return nil
}
