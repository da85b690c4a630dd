package httpapi

import (
	"bytes"
	"fmt"
	"mime"
	"net/http"
	"strconv"

	"github.com/custody-mem/custody"
)

// PolicyResponse is the tenant's active policy.
type PolicyResponse struct {
	Version string                  `json:"version" doc:"hex SHA-256 of the policy text"`
	Text    string                  `json:"text" doc:"the Cedar policy"`
	Risks   map[string]custody.Risk `json:"risks" doc:"the gate risk each rule declares"`
}

// PolicyRequest is the JSON form of PUT /v1/policy; the body may also be
// the Cedar text itself with Content-Type: text/plain.
type PolicyRequest struct {
	Text string `json:"text" doc:"the Cedar policy"`
}

// PolicyChangeResponse is the answer of PUT /v1/policy: the new version and
// the pending candidates that left pending under it.
type PolicyChangeResponse struct {
	Version string   `json:"version"`
	Changed []string `json:"changed"`
}

func (s *Server) getPolicy(w http.ResponseWriter, r *http.Request) error {
	c, err := s.queryCaller(r)
	if err != nil {
		return err
	}
	p, err := s.svc.ActivePolicy(r.Context(), c)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, PolicyResponse{Version: p.Version, Text: p.Text, Risks: p.Risks()})
	return nil
}

func (s *Server) putPolicy(w http.ResponseWriter, r *http.Request) error {
	b, err := readBody(w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	text := b
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "text/plain" {
		var req PolicyRequest
		if err := decodeBytes(b, &req, false); err != nil {
			return err
		}
		text = []byte(req.Text)
	}
	if len(bytes.TrimSpace(text)) == 0 {
		return badRequest("invalid_input", "text", "the policy text is empty; send the Cedar policy (GET /v1/policy shows the active one)")
	}
	force := false
	if v := r.URL.Query().Get("force"); v != "" {
		var perr error
		if force, perr = strconv.ParseBool(v); perr != nil {
			return badRequest("invalid_input", "force", fmt.Sprintf("force=%q must be true or false", v))
		}
	}
	c, err := s.queryCaller(r)
	if err != nil {
		return err
	}
	p, changed, err := s.svc.ChangePolicy(r.Context(), c, text, custody.PolicyChange{Force: force})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, PolicyChangeResponse{Version: p.Version, Changed: nonNil(changed)})
	return nil
}
