package httpapi

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/custody-mem/custody"
)

// PauseRequest pauses the writes of a principal or of a channel of the
// caller's tenant.
type PauseRequest struct {
	Writer  string     `json:"writer,omitempty" doc:"a principal's name: its writes are held"`
	Channel string     `json:"channel,omitempty" doc:"a channel (tool:email): every write on it is held, tenant-wide"`
	For     string     `json:"for,omitempty" doc:"how long, as a Go duration (90m, 2h); without for and until, until resumed"`
	Until   *time.Time `json:"until,omitempty" doc:"until when (RFC 3339)"`
	Reason  string     `json:"reason" doc:"why; shown in the receipts of the held candidates"`
	Subject string     `json:"subject,omitempty"`
}

// PausesResponse lists pauses.
type PausesResponse struct {
	Items []*custody.Pause `json:"items"`
}

func (s *Server) pauseRoutes() []route {
	return []route{
		{method: "POST", path: "/v1/pauses", summary: "Hold a writer's or a channel's candidates for review (admin or reviewer)", tag: "pauses",
			request: PauseRequest{}, status: 201, response: custody.Pause{}, errors: []int{403}, handler: s.setPause},
		{method: "GET", path: "/v1/pauses", summary: "The tenant's active pauses, or all of them with all=true (admin or reviewer)", tag: "pauses",
			query:  []param{{name: "all", doc: "true lists resumed and ended pauses too"}, subjectParam},
			status: 200, response: PausesResponse{}, errors: []int{403}, handler: s.listPauses},
		{method: "DELETE", path: "/v1/pauses/{id}", summary: "Resume a pause; what it held stays quarantined for review (admin or reviewer)", tag: "pauses",
			query: []param{subjectParam}, notFound: "pause not found", status: 200, response: custody.Pause{}, errors: []int{403, 404, 409}, handler: s.resumePause},
	}
}

func (s *Server) setPause(w http.ResponseWriter, r *http.Request) error {
	var req PauseRequest
	if err := decodeJSON(w, r, s.opts.MaxBodyBytes, &req, false); err != nil {
		return err
	}
	c, err := s.callerFor(r, req.Subject)
	if err != nil {
		return err
	}
	in := custody.PauseInput{Writer: req.Writer, Channel: req.Channel, Reason: req.Reason}
	if req.For != "" {
		if in.For, err = time.ParseDuration(req.For); err != nil || in.For <= 0 {
			return badRequest("invalid_input", "for", fmt.Sprintf("for=%q is not a positive duration; write it like 90m or 2h", req.For))
		}
	}
	if req.Until != nil {
		in.Until = *req.Until
	}
	p, err := s.svc.SetPause(r.Context(), c, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, p)
	return nil
}

func (s *Server) listPauses(w http.ResponseWriter, r *http.Request) error {
	all := false
	if v := r.URL.Query().Get("all"); v != "" {
		var err error
		if all, err = strconv.ParseBool(v); err != nil {
			return badRequest("invalid_input", "all", fmt.Sprintf("all=%q must be true or false", v))
		}
	}
	c, err := s.queryCaller(r)
	if err != nil {
		return err
	}
	ps, err := s.svc.Pauses(r.Context(), c, all)
	if err != nil {
		return err
	}
	if ps == nil {
		ps = []*custody.Pause{}
	}
	writeJSON(w, http.StatusOK, PausesResponse{Items: ps})
	return nil
}

func (s *Server) resumePause(w http.ResponseWriter, r *http.Request) error {
	c, id, err := s.recordCaller(r)
	if err != nil {
		return err
	}
	p, err := s.svc.ResumePause(r.Context(), c, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}
