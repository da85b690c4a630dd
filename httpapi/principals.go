package httpapi

import (
	"net/http"

	"github.com/custody-mem/custody"
)

// The admin API of principals: list, show, change rights, rotate the token
// and revoke, within the admin's own tenant. No answer carries token
// material except the new token of a rotation, once.

// PrincipalsResponse lists a tenant's principals.
type PrincipalsResponse struct {
	Items []custody.PrincipalInfo `json:"items"`
}

// PrincipalUpdateRequest changes a principal's rights: a field left out
// keeps its value; "groups": [] removes every group.
type PrincipalUpdateRequest struct {
	Roles    []string  `json:"roles,omitempty" doc:"the new roles (replacing the old ones)"`
	Channels []string  `json:"channels,omitempty" doc:"the new channels (replacing the old ones)"`
	Groups   *[]string `json:"groups,omitempty" doc:"the new groups (replacing the old ones)"`
	Reason   string    `json:"reason,omitempty" doc:"why, for the log"`
}

// PrincipalReasonRequest is the optional body of a rotation or revocation.
type PrincipalReasonRequest struct {
	Reason string `json:"reason,omitempty" doc:"why, for the log"`
}

// RotateResponse is the principal with its new token, shown this once.
type RotateResponse struct {
	Principal custody.PrincipalInfo `json:"principal"`
	Token     string                `json:"token" doc:"the new bearer token; only its hash is stored, and the old token is refused from now on"`
}

func (s *Server) principalRoutes() []route {
	nf := "principal not found"
	return []route{
		{method: "GET", path: "/v1/principals", summary: "The tenant's principals, without token material (admin)", tag: "principals",
			query: []param{subjectParam}, status: 200, response: PrincipalsResponse{}, errors: []int{403}, handler: s.listPrincipals},
		{method: "GET", path: "/v1/principals/{name}", summary: "One principal of the tenant (admin)", tag: "principals",
			query: []param{subjectParam}, notFound: nf, status: 200, response: custody.PrincipalInfo{}, errors: []int{403, 404}, handler: s.showPrincipal},
		{method: "PATCH", path: "/v1/principals/{name}", summary: "Change a principal's roles, channels or groups (admin)", tag: "principals",
			request: PrincipalUpdateRequest{}, query: []param{subjectParam}, notFound: nf,
			status: 200, response: custody.PrincipalInfo{}, errors: []int{403, 404, 409}, handler: s.updatePrincipal},
		{method: "POST", path: "/v1/principals/{name}/rotate", summary: "Give a principal a new token, shown once; the old one is refused (admin)", tag: "principals",
			request: PrincipalReasonRequest{}, optionalBody: true, query: []param{subjectParam}, notFound: nf,
			status: 200, response: RotateResponse{}, errors: []int{403, 404, 409}, handler: s.rotatePrincipal},
		{method: "POST", path: "/v1/principals/{name}/revoke", summary: "Revoke a principal for good; its records stay (admin)", tag: "principals",
			request: PrincipalReasonRequest{}, optionalBody: true, query: []param{subjectParam}, notFound: nf,
			status: 200, response: custody.PrincipalInfo{}, errors: []int{403, 404, 409}, handler: s.revokePrincipal},
	}
}

// principalAdmin resolves the caller (401 and 403 first) and requires the
// admin role.
func (s *Server) principalAdmin(r *http.Request) (custody.PrincipalAdmin, error) {
	c, err := s.queryCaller(r)
	if err != nil {
		return custody.PrincipalAdmin{}, err
	}
	return s.svc.AdminOf(c)
}

func (s *Server) listPrincipals(w http.ResponseWriter, r *http.Request) error {
	a, err := s.principalAdmin(r)
	if err != nil {
		return err
	}
	ps, err := s.svc.ListPrincipals(r.Context(), a)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, PrincipalsResponse{Items: ps})
	return nil
}

func (s *Server) showPrincipal(w http.ResponseWriter, r *http.Request) error {
	a, err := s.principalAdmin(r)
	if err != nil {
		return err
	}
	p, err := s.svc.ShowPrincipal(r.Context(), a, r.PathValue("name"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

func (s *Server) updatePrincipal(w http.ResponseWriter, r *http.Request) error {
	var req PrincipalUpdateRequest
	if err := decodeJSON(w, r, s.opts.MaxBodyBytes, &req, false); err != nil {
		return err
	}
	a, err := s.principalAdmin(r)
	if err != nil {
		return err
	}
	ch := custody.PrincipalChange{Roles: req.Roles, Channels: req.Channels, Reason: req.Reason}
	if req.Groups != nil {
		ch.Groups, ch.SetGroups = *req.Groups, true
	}
	p, err := s.svc.UpdatePrincipal(r.Context(), a, r.PathValue("name"), ch)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

func (s *Server) rotatePrincipal(w http.ResponseWriter, r *http.Request) error {
	var req PrincipalReasonRequest
	if err := decodeJSON(w, r, s.opts.MaxBodyBytes, &req, true); err != nil {
		return err
	}
	a, err := s.principalAdmin(r)
	if err != nil {
		return err
	}
	p, token, err := s.svc.RotatePrincipal(r.Context(), a, r.PathValue("name"), req.Reason)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, RotateResponse{Principal: p, Token: token})
	return nil
}

func (s *Server) revokePrincipal(w http.ResponseWriter, r *http.Request) error {
	var req PrincipalReasonRequest
	if err := decodeJSON(w, r, s.opts.MaxBodyBytes, &req, true); err != nil {
		return err
	}
	a, err := s.principalAdmin(r)
	if err != nil {
		return err
	}
	p, err := s.svc.RevokePrincipal(r.Context(), a, r.PathValue("name"), req.Reason)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}
