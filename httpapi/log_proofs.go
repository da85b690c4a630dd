package httpapi

import "net/http"

// InclusionProofsRequest asks for the inclusion proofs of many leaves in
// one tree.
type InclusionProofsRequest struct {
	Indexes []uint64 `json:"indexes" doc:"1 to 1000 leaf indexes"`
	Size    uint64   `json:"size" doc:"the tree size to prove them in (a checkpoint's)"`
	Subject string   `json:"subject,omitempty" doc:"the user to act for; required for agent principals"`
}

// InclusionProofsResponse holds one proof per requested index, in the
// order of the request.
type InclusionProofsResponse struct {
	Size   uint64                   `json:"size"`
	Proofs []InclusionProofResponse `json:"proofs"`
}

// logProofRoutes are the batch proof routes.
func (s *Server) logProofRoutes() []route {
	return []route{
		{method: "POST", path: "/v1/log/proofs", summary: "RFC 6962 inclusion proofs of up to 1000 leaves in one tree", tag: "log", logRead: true,
			request: InclusionProofsRequest{}, status: 200, response: InclusionProofsResponse{}, handler: s.inclusionProofs},
	}
}

func (s *Server) inclusionProofs(w http.ResponseWriter, r *http.Request) error {
	var req InclusionProofsRequest
	if err := decodeJSON(w, r, s.opts.MaxBodyBytes, &req, false); err != nil {
		return err
	}
	c, err := s.callerFor(r, req.Subject)
	if err != nil {
		return err
	}
	proofs, err := s.svc.InclusionProofs(r.Context(), c.Tenant(), req.Indexes, req.Size)
	if err != nil {
		return err
	}
	out := InclusionProofsResponse{Size: req.Size, Proofs: make([]InclusionProofResponse, len(proofs))}
	for i, p := range proofs {
		out.Proofs[i] = InclusionProofResponse{Index: req.Indexes[i], Size: req.Size, Hashes: b64s(p)}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
