package custody

import "context"

// NamespacePage is a page of the namespaces a subject can see.
type NamespacePage struct {
	Items      []string `json:"items"`
	NextCursor string   `json:"next_cursor,omitempty"`
}

// Default and largest page of Namespaces.
const (
	DefaultNamespaceLimit = 100
	MaxNamespaceLimit     = 1000
)

// Namespaces lists, in order, the namespaces holding a record the caller's
// subject may retrieve (the eligibility of Get: tenant, audience, state,
// expiry, newest version), under prefix when it is set: the namespace
// itself and those below it ("work" lists work and work/notes, not
// workshop). A namespace that holds only records the subject may not see
// is not named.
func (s *Service) Namespaces(ctx context.Context, c *Caller, prefix, cursor string, limit int) (*NamespacePage, error) {
	if prefix != "" {
		if err := ValidNamespace(prefix); err != nil {
			return nil, invalid("prefix", "prefix: %s", err.Error())
		}
	}
	if cursor != "" {
		if err := ValidNamespace(cursor); err != nil {
			return nil, invalid("cursor", "the cursor is the last namespace of the previous page; %s", err.Error())
		}
	}
	n, err := checkLimit(limit, DefaultNamespaceLimit, MaxNamespaceLimit)
	if err != nil {
		return nil, err
	}
	items, err := s.store.Namespaces(ctx, c.scope(s.now()), prefix, cursor, n+1)
	if err != nil {
		return nil, err
	}
	page := &NamespacePage{Items: items}
	if len(items) > n {
		page.Items, page.NextCursor = items[:n], items[n-1]
	}
	if page.Items == nil {
		page.Items = []string{}
	}
	return page, nil
}

// validNamespaces checks the namespace filters of a list or search: each
// is a namespace when set, and at most one is set.
func validNamespaces(namespace, prefix string) error {
	if namespace != "" && prefix != "" {
		return invalid("namespace_prefix", "namespace and namespace_prefix exclude each other: give namespace for exactly one namespace, or namespace_prefix for it and those below it")
	}
	if namespace != "" {
		if err := ValidNamespace(namespace); err != nil {
			return err
		}
	}
	if prefix != "" {
		if err := ValidNamespace(prefix); err != nil {
			return invalid("namespace_prefix", "namespace_prefix: %s", err.Error())
		}
	}
	return nil
}
