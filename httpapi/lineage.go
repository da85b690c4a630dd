package httpapi

import (
	"net/http"

	"github.com/custody-mem/custody"
)

func (s *Server) lineage(w http.ResponseWriter, r *http.Request) error {
	c, err := s.caller(r, r.URL.Query().Get("subject"))
	if err != nil {
		return err
	}
	id, err := pathID(r)
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
