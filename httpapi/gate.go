package httpapi

import (
	"net/http"

	"github.com/custody-mem/custody"
)

// GateRequest is the body of POST /v1/gate: an action, its arguments and the
// memories that justify it.
type GateRequest struct {
	Action        string         `json:"action" example:"payments.send"`
	Args          map[string]any `json:"args,omitempty" doc:"the action's arguments; those the policy's @trace names (every string and number for an action it declares nothing for) are traced to memories and observations"`
	Justification []string       `json:"justification,omitempty" doc:"ids of the memories that justify the action (at most 100)"`
	Session       string         `json:"session,omitempty" doc:"the session whose observations the arguments may come from"`
	Subject       string         `json:"subject,omitempty"`
}

// GateConfirmRequest is the body of POST /v1/gate/confirm: the owner's
// one-time confirmation of an exact action and arguments.
type GateConfirmRequest struct {
	Action  string         `json:"action"`
	Args    map[string]any `json:"args,omitempty"`
	Subject string         `json:"subject,omitempty"`
}

// GateConfirmResponse names the confirmed action: the confirm_digest the
// gate gave.
type GateConfirmResponse struct {
	Digest string `json:"digest"`
}

func (s *Server) gate(w http.ResponseWriter, r *http.Request) error {
	var req GateRequest
	if err := decodeJSON(w, r, s.opts.MaxBodyBytes, &req, false); err != nil {
		return err
	}
	c, err := s.callerFor(r, req.Subject)
	if err != nil {
		return err
	}
	d, err := s.svc.Gate(r.Context(), c, custody.GateInput{
		Action: req.Action, Args: req.Args, Justification: req.Justification, Session: req.Session,
	})
	if err != nil {
		return err
	}
	if d.Reasons == nil {
		d.Reasons = []string{}
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}

func (s *Server) gateConfirm(w http.ResponseWriter, r *http.Request) error {
	var req GateConfirmRequest
	if err := decodeJSON(w, r, s.opts.MaxBodyBytes, &req, false); err != nil {
		return err
	}
	if req.Action == "" {
		return badRequest("invalid_input", "action", "action is required: name the action the gate asked to confirm")
	}
	c, err := s.callerFor(r, req.Subject)
	if err != nil {
		return err
	}
	digest, err := s.svc.ConfirmAction(r.Context(), c, req.Action, req.Args)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, GateConfirmResponse{Digest: digest})
	return nil
}
