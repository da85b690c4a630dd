package mem0api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	custody "github.com/custody-mem/custody"
)

// head is the version in force of the memory with Mem0 id id, read as c.
func (a *API) head(r *http.Request, c *custody.Caller, id string) (*custody.Record, error) {
	if err := custody.ValidKey(keyPrefix + id); err != nil {
		return nil, &custody.Error{Kind: custody.ErrNotFound, Msg: "memory not found"}
	}
	page, err := a.svc.List(r.Context(), c, custody.ListInput{Namespace: a.opts.Namespace, Key: keyPrefix + id,
		Filters: custody.Filters{Metadata: custody.Metadata{metaMemory: "1", metaID: id}}})
	if err != nil {
		return nil, err
	}
	if len(page.Items) == 0 {
		return nil, &custody.Error{Kind: custody.ErrNotFound, Msg: "memory not found"}
	}
	return page.Items[0], nil
}

// subjectQuery is the user a request on one memory acts for: ?user_id=
// (or custody's ?subject=), needed by an agent principal only.
func subjectQuery(r *http.Request) string {
	if u := r.URL.Query().Get("user_id"); u != "" {
		return u
	}
	return r.URL.Query().Get("subject")
}

func (a *API) get(w http.ResponseWriter, r *http.Request) error {
	c, err := a.caller(r, subjectQuery(r))
	if err != nil {
		return err
	}
	rec, err := a.head(r, c, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, memoryOf(rec))
	return nil
}

type listRequest struct {
	Filters json.RawMessage `json:"filters"`
}

// Page is get_all's answer: Mem0's page of memories.
type Page struct {
	Count    int      `json:"count"`
	Next     *string  `json:"next"`
	Previous *string  `json:"previous"`
	Results  []Memory `json:"results"`
}

func (a *API) getAll(w http.ResponseWriter, r *http.Request) error {
	var req listRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	s, err := parseFilters(req.Filters)
	if err != nil {
		return err
	}
	page, size := 1, 100
	for name, dst := range map[string]*int{"page": &page, "page_size": &size} {
		if v := r.URL.Query().Get(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || (name == "page_size" && n > custody.MaxListLimit) {
				return invalid(name, "%s must be a whole number from 1%s", name, map[bool]string{true: fmt.Sprintf(" to %d", custody.MaxListLimit), false: ""}[name == "page_size"])
			}
			*dst = n
		}
	}
	c, err := a.caller(r, s.userID)
	if err != nil {
		return err
	}
	out := Page{Results: []Memory{}}
	if !s.none {
		in := custody.ListInput{Namespace: a.opts.Namespace, Filters: s.filters(), Limit: custody.MaxListLimit}
		for {
			p, err := a.svc.List(r.Context(), c, in)
			if err != nil {
				return err
			}
			for _, rec := range p.Items {
				if out.Count >= (page-1)*size && len(out.Results) < size {
					out.Results = append(out.Results, memoryOf(rec))
				}
				out.Count++
			}
			if p.NextCursor == "" {
				break
			}
			in.Cursor = p.NextCursor
		}
	}
	link := func(p int) *string {
		q := r.URL.Query()
		q.Set("page", strconv.Itoa(p))
		q.Set("page_size", strconv.Itoa(size))
		u := Prefix + r.URL.Path + "?" + q.Encode()
		return &u
	}
	if page*size < out.Count {
		out.Next = link(page + 1)
	}
	if page > 1 {
		out.Previous = link(page - 1)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

type searchRequest struct {
	Query    string          `json:"query"`
	Filters  json.RawMessage `json:"filters"`
	TopK     int             `json:"top_k"`
	Metadata json.RawMessage `json:"metadata"`
	// Mode is custody's search mode (lexical, semantic, hybrid); default the server's.
	Mode string `json:"mode"`
}

// SearchResponse is search's answer.
type SearchResponse struct {
	Results []Memory `json:"results"`
}

func (a *API) search(w http.ResponseWriter, r *http.Request) error {
	var req searchRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	s, err := parseFilters(req.Filters)
	if err != nil {
		return err
	}
	if len(req.Metadata) > 0 && string(req.Metadata) != "null" {
		if err := s.add(map[string]json.RawMessage{"metadata": req.Metadata}, 0); err != nil {
			return err
		}
	}
	// One rule for every surface: 1 to custody.MaxSearchLimit results (Mem0's default 10).
	if req.TopK < 0 || req.TopK > custody.MaxSearchLimit {
		return invalid("top_k", "top_k must be from 1 to %d (custody's search limit); got %d", custody.MaxSearchLimit, req.TopK)
	}
	c, err := a.caller(r, s.userID)
	if err != nil {
		return err
	}
	out := SearchResponse{Results: []Memory{}}
	if !s.none {
		res, err := a.svc.SearchIn(r.Context(), c, "", custody.SearchInput{Query: req.Query, Namespace: a.opts.Namespace,
			Filters: s.filters(), Limit: req.TopK, Mode: custody.SearchMode(req.Mode)})
		if err != nil {
			return err
		}
		for _, h := range res.Items {
			m := memoryOf(h.Record)
			score := h.Score
			m.Score = &score
			out.Results = append(out.Results, m)
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

type updateRequest struct {
	Text           *string         `json:"text"`
	Metadata       json.RawMessage `json:"metadata"`
	ExpirationDate *string         `json:"expiration_date"`
	Channel        string          `json:"channel"`
	Session        string          `json:"session"`
}

// UpdateResponse is update's answer: the memory as it now stands (the old
// version when admission held the update) and custody's decision.
type UpdateResponse struct {
	Memory
	Event   string `json:"event"`
	Message string `json:"message"`
}

func (a *API) update(w http.ResponseWriter, r *http.Request) error {
	var req updateRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	c, err := a.caller(r, subjectQuery(r))
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	cur, err := a.head(r, c, id)
	if err != nil {
		return err
	}
	channel, err := a.channel(c, req.Channel)
	if err != nil {
		return err
	}
	meta := custody.Metadata{}
	for k, v := range cur.Metadata {
		meta[k] = v
	}
	if len(req.Metadata) > 0 {
		for k := range meta { // the caller's metadata is replaced, the marks kept
			if custody.AdapterMark(custody.Metadata{k: ""}) == "" {
				delete(meta, k)
			}
		}
		delete(meta, metaMetadata)
		fresh, err := writeMetadata(req.Metadata)
		if err != nil {
			return err
		}
		for k, v := range fresh {
			meta[k] = v
		}
	}
	if _, ok := meta[metaCreated]; !ok {
		meta[metaCreated] = cur.CreatedAt.UTC().Format(time.RFC3339Nano)
	}
	cand := custody.Candidate{Namespace: cur.Namespace, Key: cur.Key, Class: cur.Class, Body: cur.Body, Channel: channel,
		Session: req.Session, SourceRef: "mem0", ExpiresAt: cur.ExpiresAt, Metadata: meta}
	if req.Text != nil {
		cand.Body = *req.Text
	}
	if req.ExpirationDate != nil {
		if cand.ExpiresAt, err = expiry(*req.ExpirationDate); err != nil {
			return err
		}
	}
	d, err := a.svc.Remember(r.Context(), c, cand)
	if err != nil {
		return err
	}
	out := UpdateResponse{Memory: memoryOf(cur), Event: "NOOP",
		Message: fmt.Sprintf("admission held the update (%s: %s); the memory keeps its text until a reviewer approves it or its owner confirms it", d.State, d.Reason)}
	if d.State == custody.StateAdmitted {
		now, err := a.head(r, c, id)
		if err != nil {
			return err
		}
		out = UpdateResponse{Memory: memoryOf(now), Event: "UPDATE", Message: "Memory updated successfully!"}
	} else {
		out.Custody.State, out.Custody.Reason, out.Custody.RecordID = string(d.State), d.Reason, d.ID
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// Deleted answers delete and delete_all.
type Deleted struct {
	Message string   `json:"message"`
	Deleted []string `json:"deleted"`
}

// delete retires the memory: custody's owner delete (an agent acting for
// the owner may not; the owner does, with her own token).
func (a *API) delete(w http.ResponseWriter, r *http.Request) error {
	c, err := a.caller(r, subjectQuery(r))
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	cur, err := a.head(r, c, id)
	if err != nil {
		return err
	}
	if _, err := a.svc.Forget(r.Context(), c, cur.ID, "deleted through the Mem0 routes", false); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, Deleted{Message: "Memory deleted successfully!", Deleted: []string{id}})
	return nil
}

func (a *API) deleteAll(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	f := map[string]json.RawMessage{}
	for _, k := range []string{"user_id", "agent_id", "app_id", "run_id"} {
		if v := q.Get(k); v != "" {
			b, _ := json.Marshal(v)
			f[k] = b
		}
	}
	if len(f) == 0 {
		return invalid("user_id", "name at least one of user_id, agent_id, app_id, run_id: delete_all deletes what they select")
	}
	s := &scope{meta: custody.Metadata{}}
	if err := s.add(f, 0); err != nil {
		return err
	}
	c, err := a.caller(r, s.userID)
	if err != nil {
		return err
	}
	out := Deleted{Message: "Memories deleted successfully!", Deleted: []string{}}
	if s.none {
		writeJSON(w, http.StatusOK, out)
		return nil
	}
	var recs []*custody.Record
	in := custody.ListInput{Namespace: a.opts.Namespace, Filters: s.filters(), Limit: custody.MaxListLimit}
	for {
		p, err := a.svc.List(r.Context(), c, in)
		if err != nil {
			return err
		}
		recs = append(recs, p.Items...)
		if p.NextCursor == "" {
			break
		}
		in.Cursor = p.NextCursor
	}
	for _, rec := range recs {
		if rec.Owner != c.Subject.Name {
			continue // shared with the user by someone else: not hers to delete
		}
		if _, err := a.svc.Forget(r.Context(), c, rec.ID, "deleted through the Mem0 routes (delete_all)", false); err != nil {
			return err
		}
		out.Deleted = append(out.Deleted, memoryOf(rec).ID)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// HistoryEntry is one version of a memory, as Mem0's history lists them,
// with custody's provenance (superseded_by marks a version no longer in force).
type HistoryEntry struct {
	ID        string     `json:"id"`
	MemoryID  string     `json:"memory_id"`
	Input     []message  `json:"input"`
	OldMemory *string    `json:"old_memory"`
	NewMemory *string    `json:"new_memory"`
	UserID    string     `json:"user_id"`
	Event     string     `json:"event"`
	CreatedAt string     `json:"created_at"`
	UpdatedAt string     `json:"updated_at"`
	Custody   Provenance `json:"custody"`
}

func (a *API) history(w http.ResponseWriter, r *http.Request) error {
	c, err := a.caller(r, subjectQuery(r))
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	cur, err := a.head(r, c, id)
	if err != nil {
		return err
	}
	vs, err := a.svc.History(r.Context(), c, cur.ID)
	if err != nil {
		return err
	}
	out := make([]HistoryEntry, 0, len(vs))
	var prev *string
	for i, v := range vs {
		e := HistoryEntry{ID: v.ID, MemoryID: id, Input: []message{}, UserID: v.Metadata[metaUser], Event: "UPDATE",
			CreatedAt: v.CreatedAt.UTC().Format(time.RFC3339Nano), UpdatedAt: v.CreatedAt.UTC().Format(time.RFC3339Nano), Custody: provenance(v)}
		if i == 0 {
			e.Event = "ADD"
		}
		if v.Receipt != nil {
			e.Custody.Reason = v.Receipt.Reason
		}
		if !v.Withheld {
			body := v.Body
			e.NewMemory = &body
		}
		e.OldMemory = prev
		if v.State == custody.StateAdmitted && !v.Withheld {
			prev = e.NewMemory
		}
		out = append(out, e)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
