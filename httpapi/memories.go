package httpapi

import (
	"net/http"
	"time"

	"github.com/custody-mem/custody"
)

// MemoryRequest is the body of POST /v1/memories: a candidate. It carries
// no control fields (state, authority, owner, writer): those come from the
// credential and the policy, and a body naming them is refused.
type MemoryRequest struct {
	Namespace   string            `json:"namespace" doc:"1 to 8 segments joined by /, each [A-Za-z0-9_.-]{1,64}" example:"profile"`
	Key         string            `json:"key,omitempty" doc:"[A-Za-z0-9_.:-]{1,128}; a keyed record replaces the previous version when admitted" example:"payee_account"`
	Class       string            `json:"class" enum:"preference,fact,episode,procedure"`
	Body        string            `json:"body" doc:"the memory, opaque text: never parsed for control fields"`
	Channel     string            `json:"channel" doc:"how the content arrived; must be one of the principal's registered channels" example:"user"`
	Subject     string            `json:"subject,omitempty" doc:"the user the write is for; required for agent principals"`
	Audience    string            `json:"audience,omitempty" doc:"owner (default), group:<name> or tenant"`
	ExpiresAt   string            `json:"expires_at,omitempty" format:"date-time" doc:"RFC 3339; must be in the future"`
	Session     string            `json:"session,omitempty" doc:"the session the write comes from (agent channel)"`
	DerivedFrom []custody.Edge    `json:"derived_from,omitempty" doc:"parents of a derived record, with weights in [0,1]"`
	SourceRef   string            `json:"source_ref,omitempty" doc:"where the content came from (URL, message id, file)"`
	Metadata    map[string]string `json:"metadata,omitempty" doc:"optional plain data kept with the record: at most 16 keys of [a-z0-9_.-]{1,64}, string values of at most 512 bytes, 4 KiB in all; never a control field (a key named channel or state changes nothing); the admission policy reads it as context.metadata"`
}

// candidate turns the request into the domain's candidate.
func (m *MemoryRequest) candidate() (custody.Candidate, error) {
	c := custody.Candidate{
		Namespace: m.Namespace, Key: m.Key, Class: custody.Class(m.Class), Body: m.Body, Channel: m.Channel,
		Audience: m.Audience, Session: m.Session, DerivedFrom: m.DerivedFrom, SourceRef: m.SourceRef,
		Metadata: m.Metadata,
	}
	if m.ExpiresAt != "" {
		t, err := time.Parse(time.RFC3339Nano, m.ExpiresAt)
		if err != nil {
			return c, badRequest("invalid_input", "expires_at", "expires_at must be an RFC 3339 time such as 2030-01-02T15:04:05Z")
		}
		t = t.UTC()
		c.ExpiresAt = &t
	}
	return c, nil
}

// SearchRequest is the body of POST /v1/search: plain text, never a query
// language.
type SearchRequest struct {
	Query     string `json:"query" doc:"plain text; words are matched as terms"`
	Subject   string `json:"subject,omitempty"`
	Session   string `json:"session,omitempty" doc:"a session the caller opened: the ids of the hits are recorded for the impact of a later repair"`
	Namespace string `json:"namespace,omitempty" doc:"only this namespace"`
	// NamespacePrefix excludes Namespace.
	NamespacePrefix string            `json:"namespace_prefix,omitempty" doc:"only this namespace and those below it (work: work, work/notes; not workshop); not with namespace"`
	Class           string            `json:"class,omitempty" enum:"preference,fact,episode,procedure"`
	KeyPrefix       string            `json:"key_prefix,omitempty" doc:"only keyed records whose key starts with this"`
	CreatedAfter    string            `json:"created_after,omitempty" format:"date-time" doc:"only records created strictly after this RFC 3339 time"`
	CreatedBefore   string            `json:"created_before,omitempty" format:"date-time" doc:"only records created strictly before this RFC 3339 time"`
	Metadata        map[string]string `json:"metadata,omitempty" doc:"only records whose metadata has each of these keys with exactly this value"`
	Limit           int               `json:"limit,omitempty" doc:"default 10, at most 100"`
	Mode            string            `json:"mode,omitempty" enum:"lexical,semantic,hybrid" doc:"lexical (words), semantic (meaning, by embeddings) or both fused; default hybrid when the server has an embedder, else lexical"`
}

// SearchResponse is the answer of POST /v1/search, best first. Search is
// not paginated: next_cursor is always empty. Each item says which lists
// (lexical, semantic; context for an episode found as the one after a
// match) found it; fallback says why a semantic or hybrid
// search was answered lexically.
type SearchResponse struct {
	Items      []custody.Scored `json:"items"`
	NextCursor string           `json:"next_cursor"`
	Mode       string           `json:"mode" enum:"lexical,semantic,hybrid" doc:"the mode that ranked the items"`
	Fallback   string           `json:"fallback,omitempty" doc:"why the search is lexical although semantic or hybrid was asked for (e.g. embedder unavailable: …)"`
}

// ListResponse is one page of eligible records; next_cursor is "" at the end.
type ListResponse struct {
	Items      []*custody.Record `json:"items"`
	NextCursor string            `json:"next_cursor"`
}

// HistoryResponse lists the versions of a keyed record, oldest first.
type HistoryResponse struct {
	Items []*custody.Record `json:"items"`
}

// SubjectRequest is the optional body of actions that need nothing but the
// subject (which may also be given as ?subject=).
type SubjectRequest struct {
	Subject string `json:"subject,omitempty"`
}

func (s *Server) remember(w http.ResponseWriter, r *http.Request) error {
	var req MemoryRequest
	if err := decodeJSON(w, r, s.opts.MaxBodyBytes, &req, false); err != nil {
		return err
	}
	cand, err := req.candidate()
	if err != nil {
		return err
	}
	c, err := s.callerFor(r, req.Subject)
	if err != nil {
		return err
	}
	d, err := s.svc.Remember(r.Context(), c, cand)
	if err != nil {
		return err
	}
	status := http.StatusAccepted
	if d.State == custody.StateAdmitted {
		status = http.StatusCreated
	}
	writeDecision(w, status, d)
	return nil
}

func (s *Server) getMemory(w http.ResponseWriter, r *http.Request) error {
	c, id, err := s.recordCaller(r)
	if err != nil {
		return err
	}
	rec, err := s.svc.GetIn(r.Context(), c, r.URL.Query().Get("session"), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wireRecord(rec))
	return nil
}

func (s *Server) listMemories(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	c, err := s.caller(r, q.Get("subject"))
	if err != nil {
		return err
	}
	limit, err := queryInt(r, "limit")
	if err != nil {
		return err
	}
	f, err := queryFilters(q)
	if err != nil {
		return err
	}
	page, err := s.svc.ListIn(r.Context(), c, q.Get("session"), custody.ListInput{
		Namespace: q.Get("namespace"), NamespacePrefix: q.Get("namespace_prefix"), Key: q.Get("key"), Class: custody.Class(q.Get("class")),
		Filters: f, Limit: limit, Cursor: q.Get("cursor"),
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ListResponse{Items: wireRecords(page.Items), NextCursor: page.NextCursor})
	return nil
}

func (s *Server) search(w http.ResponseWriter, r *http.Request) error {
	var req SearchRequest
	if err := decodeJSON(w, r, s.opts.MaxBodyBytes, &req, false); err != nil {
		return err
	}
	c, err := s.callerFor(r, req.Subject)
	if err != nil {
		return err
	}
	f, err := filters(req.KeyPrefix, req.CreatedAfter, req.CreatedBefore, req.Metadata)
	if err != nil {
		return err
	}
	res, err := s.svc.SearchIn(r.Context(), c, req.Session, custody.SearchInput{
		Query: req.Query, Namespace: req.Namespace, NamespacePrefix: req.NamespacePrefix, Class: custody.Class(req.Class),
		Filters: f, Limit: req.Limit, Mode: custody.SearchMode(req.Mode),
	})
	if err != nil {
		return err
	}
	for _, h := range res.Items {
		wireRecord(h.Record)
	}
	writeJSON(w, http.StatusOK, SearchResponse{Items: res.Items, Mode: string(res.Mode), Fallback: res.Fallback})
	return nil
}

func (s *Server) history(w http.ResponseWriter, r *http.Request) error {
	c, id, err := s.recordCaller(r)
	if err != nil {
		return err
	}
	recs, err := s.svc.History(r.Context(), c, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, HistoryResponse{Items: wireRecords(recs)})
	return nil
}

func (s *Server) confirm(w http.ResponseWriter, r *http.Request) error {
	var req ConfirmRequest
	c, id, err := s.bodyCaller(w, r, &req, &req.Subject)
	if err != nil {
		return err
	}
	rec, err := s.svc.ConfirmBecause(r.Context(), c, id, req.Reason)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wireRecord(rec))
	return nil
}

// bodyCaller decodes an optional body, resolves the subject from it (or
// ?subject=) and reads the {id} of the path.
func (s *Server) bodyCaller(w http.ResponseWriter, r *http.Request, req any, subject *string) (*custody.Caller, string, error) {
	if err := decodeJSON(w, r, s.opts.MaxBodyBytes, req, true); err != nil {
		return nil, "", err
	}
	c, err := s.callerFor(r, *subject)
	if err != nil {
		return nil, "", err
	}
	id, err := pathID(r)
	return c, id, err
}

// pathID reads the {id} of the path. An id that cannot be one is answered
// exactly like an id that does not exist: 404 with the route's message.
func pathID(r *http.Request) (string, error) {
	id := r.PathValue("id")
	if !custody.ValidID(id) {
		return "", custody.ErrNotFound
	}
	return id, nil
}

// wireRecord fills the fields clients rely on being present: parents is
// always an array.
func wireRecord(r *custody.Record) *custody.Record {
	if r != nil && r.Parents == nil {
		r.Parents = []custody.Edge{}
	}
	return r
}

func wireRecords(rs []*custody.Record) []*custody.Record {
	if rs == nil {
		return []*custody.Record{}
	}
	for _, r := range rs {
		wireRecord(r)
	}
	return rs
}
