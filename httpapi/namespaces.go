package httpapi

import (
	"net/http"

	"github.com/custody-mem/custody"
)

func (s *Server) namespaceRoutes() []route {
	return []route{
		{method: "GET", path: "/v1/namespaces", summary: "The namespaces holding a memory the subject may retrieve", tag: "memories",
			query: []param{{name: "prefix", doc: "only this namespace and those below it (work: work, work/notes; not workshop)"}, subjectParam, limitParam,
				{name: "cursor", doc: "next_cursor of the previous page"}},
			status: 200, response: custody.NamespacePage{}, errors: []int{403}, handler: s.listNamespaces},
	}
}

func (s *Server) listNamespaces(w http.ResponseWriter, r *http.Request) error {
	limit, err := queryInt(r, "limit")
	if err != nil {
		return err
	}
	c, err := s.queryCaller(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	page, err := s.svc.Namespaces(r.Context(), c, q.Get("prefix"), q.Get("cursor"), limit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}
