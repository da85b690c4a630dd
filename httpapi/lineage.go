package httpapi

import (
	"net/http"

	"github.com/custody-mem/custody"
)

func (s *Server) lineage(w http.ResponseWriter, r *http.Request) error {
	c, id, err := s.recordCaller(r)
	if err != nil {
		return err
	}
	l, err := s.svc.Lineage(r.Context(), c, id)
	if err != nil {
		return err
	}
	wireRecord(l.Record)
	if l.Ancestors == nil {
		l.Ancestors = []custody.LineageNode{}
	}
	if l.Descendants == nil {
		l.Descendants = []custody.LineageNode{}
	}
	writeJSON(w, http.StatusOK, l)
	return nil
}
