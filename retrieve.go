package custody

import (
	"context"
	"errors"
	"strings"
	"time"
)

// Get returns one record eligible for the caller's subject (design rule 4);
// anything else is ErrNotFound, whether absent, foreign or not visible.
func (s *Service) Get(ctx context.Context, c *Caller, id string) (*Record, error) {
	r, err := s.store.Get(ctx, c.scope(s.now()), id)
	if errors.Is(err, ErrNotFound) {
		return nil, notFound("record")
	}
	return r, err
}

// ListInput filters a listing.
type ListInput struct {
	Namespace, Key string
	// NamespacePrefix keeps this namespace and those below it; it excludes
	// Namespace.
	NamespacePrefix string
	Class           Class
	Filters
	Limit  int
	Cursor string
}

// Page is one page of records and the cursor of the next ("" at the end).
type Page struct {
	Items      []*Record `json:"items"`
	NextCursor string    `json:"next_cursor"`
}

// List returns the eligible records of the subject, the newest version per
// key, newest first.
func (s *Service) List(ctx context.Context, c *Caller, in ListInput) (*Page, error) {
	if err := validNamespaces(in.Namespace, in.NamespacePrefix); err != nil {
		return nil, err
	}
	if err := ValidKey(in.Key); err != nil {
		return nil, err
	}
	if err := validFilters(in.Filters, in.Key); err != nil {
		return nil, err
	}
	if in.Class != "" {
		if _, err := ParseClass(string(in.Class)); err != nil {
			return nil, err
		}
	}
	limit, err := checkLimit(in.Limit, DefaultListLimit, MaxListLimit)
	if err != nil {
		return nil, err
	}
	after, err := DecodeCursor(in.Cursor)
	if err != nil {
		return nil, err
	}
	recs, err := s.store.List(ctx, c.scope(s.now()), ListFilter{Namespace: in.Namespace, NamespacePrefix: in.NamespacePrefix, Key: in.Key, Class: in.Class, Filters: in.Filters, Limit: limit + 1, After: after})
	if err != nil {
		return nil, err
	}
	page := &Page{Items: recs}
	if len(recs) > limit {
		page.Items = recs[:limit]
		page.NextCursor = EncodeCursor(recs[limit-1].ID)
	}
	if page.Items == nil {
		page.Items = []*Record{}
	}
	return page, nil
}

// SearchInput is a plain-text search.
type SearchInput struct {
	Query     string
	Namespace string
	// NamespacePrefix is as in ListInput.
	NamespacePrefix string
	Class           Class
	Filters
	Limit int
	// Mode is lexical, semantic or hybrid (hybrid.go); "" is hybrid when
	// an embedder is configured, else lexical. Search itself is lexical.
	Mode SearchMode
}

// Search ranks the subject's eligible records against plain text: words are
// terms, special characters are text, never a query language.
func (s *Service) Search(ctx context.Context, c *Caller, in SearchInput) ([]Scored, error) {
	q, err := s.searchQuery(c, in)
	if err != nil {
		return nil, err
	}
	hits, err := s.store.Search(ctx, c.scope(s.now()), q)
	if hits == nil && err == nil {
		hits = []Scored{}
	}
	return hits, err
}

// searchQuery checks a search and makes it the store's query.
func (s *Service) searchQuery(c *Caller, in SearchInput) (SearchQuery, error) {
	if strings.TrimSpace(in.Query) == "" {
		return SearchQuery{}, invalid("query", "query must contain at least one word")
	}
	if len(in.Query) > 4096 {
		return SearchQuery{}, invalid("query", "query is longer than 4096 bytes")
	}
	if err := validNamespaces(in.Namespace, in.NamespacePrefix); err != nil {
		return SearchQuery{}, err
	}
	if in.Class != "" {
		if _, err := ParseClass(string(in.Class)); err != nil {
			return SearchQuery{}, err
		}
	}
	if err := validFilters(in.Filters, ""); err != nil {
		return SearchQuery{}, err
	}
	limit, err := checkLimit(in.Limit, DefaultSearchLimit, MaxSearchLimit)
	if err != nil {
		return SearchQuery{}, err
	}
	return SearchQuery{Text: in.Query, Namespace: in.Namespace, NamespacePrefix: in.NamespacePrefix, Class: in.Class, Filters: in.Filters, Limit: limit}, nil
}

// History returns the versions of a keyed record with their receipts,
// oldest first. The owner (and an agent acting for the owner) sees every
// version with its state and receipt, so it can see what was held back and
// why; anyone else sees only the versions whose bodies it may read. A body
// comes only where the caller may read it (mayRead: what retrieval would
// return, and for reviewers the review queue); any other version comes
// without its body, marked withheld, so held content never reaches a model
// through history. An admitted version that a newer admitted one replaced
// is not in force: it carries SupersededBy and no body. A history in which the caller may see no version, or
// not the version it named, is not found, like an absent record (rule 4).
func (s *Service) History(ctx context.Context, c *Caller, id string) ([]*Record, error) {
	var out []*Record
	err := s.store.View(ctx, func(tx Tx) error {
		r, err := tx.Record(ctx, c.Tenant(), id)
		if errors.Is(err, ErrNotFound) {
			return notFound("record")
		}
		if err != nil {
			return err
		}
		vs := []*Record{r}
		if r.Key != "" {
			if vs, err = tx.Versions(ctx, r.Tenant, r.Owner, r.Namespace, r.Key); err != nil {
				return err
			}
		}
		now, named := s.now(), false
		for _, v := range vs {
			v.SupersededBy = supersededBy(v, vs)
			readable := v.SupersededBy == 0 && s.mayRead(c, v, now)
			if !readable && v.Owner != c.Subject.Name {
				continue
			}
			if !readable {
				v.Body, v.Withheld = "", true
			}
			named = named || v.ID == r.ID
			out = append(out, v)
		}
		if !named {
			out = nil
			return notFound("record")
		}
		return nil
	})
	return out, err
}

// supersededBy is the version that replaced v, one of its key's versions
// vs: the next newer admitted version, when v is admitted (0 otherwise).
// Only the newest admitted version of a key is in force; every surface
// that shows a history (HTTP, MCP, the clients) marks the others with it.
func supersededBy(v *Record, vs []*Record) int {
	by := 0
	if v.State != StateAdmitted {
		return 0
	}
	for _, w := range vs {
		if w.State == StateAdmitted && w.Version > v.Version && (by == 0 || w.Version < by) {
			by = w.Version
		}
	}
	return by
}

// mayRead reports whether the caller may read r's body: where retrieval
// would return it (admitted, unexpired, in the subject's audience), and, for
// reviewers and admins, a quarantined candidate waiting in the review queue.
// Nothing else carries a body, whoever asks (design rule 4).
func (s *Service) mayRead(c *Caller, r *Record, now time.Time) bool {
	return r.Eligible(c.Subject.Name, c.Subject.Groups, now) ||
		(r.State == StateQuarantined && c.Principal.HasAny(RoleReviewer, RoleAdmin))
}

// mayInspect: the owner sees its own records in any state; reviewers and
// admins see the tenant's; others only eligible records in their audience.
// It decides who may act on a record (approve, reject, confirm), never who
// may read its body (mayRead).
func (s *Service) mayInspect(c *Caller, r *Record) bool {
	switch {
	case c.Principal.HasAny(RoleReviewer, RoleAdmin):
		return true
	case r.Owner == c.Subject.Name:
		return true
	}
	return r.Eligible(c.Subject.Name, c.Subject.Groups, s.now())
}

// checkLimit is the one limit rule of every surface (HTTP, MCP, the CLI,
// the clients): no limit (0) is the default, 1 to max is that many, and
// anything else is an error that says the bound, never quietly cut.
func checkLimit(n, def, max int) (int, error) {
	switch {
	case n == 0:
		return def, nil
	case n < 0:
		return 0, invalid("limit", "limit must be positive (got %d)", n)
	case n > max:
		return 0, invalid("limit", "limit must be at most %d (got %d)", max, n)
	}
	return n, nil
}
