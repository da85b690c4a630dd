package postgres

import (
	custody "github.com/custody-mem/custody"
)

// filterSQL is the condition of f on a record aliased r (" AND ..."), its
// arguments added to a: appended to every candidate query, beside
// eligibility. Metadata is kept as JSON text (the empty string for none, which nullif
// turns into NULL: no match); the equality filters are one containment.
func filterSQL(a *args, f custody.Filters) string {
	var q string
	if f.KeyPrefix != "" {
		q += ` AND r.key <> '' AND starts_with(r.key, ` + a.add(f.KeyPrefix) + `)`
	}
	if f.CreatedAfter != nil {
		q += ` AND r.created_at > ` + a.add(f.CreatedAfter.UnixNano())
	}
	if f.CreatedBefore != nil {
		q += ` AND r.created_at < ` + a.add(f.CreatedBefore.UnixNano())
	}
	if len(f.Metadata) > 0 {
		q += ` AND nullif(r.metadata, '')::jsonb @> ` + a.add(f.Metadata.JSON()) + `::jsonb`
	}
	return q
}

// searchFilter is the condition every candidate query of a search shares,
// lexical and semantic alike, on a record aliased r: the eligibility of
// sc (design rule 4) and q's namespace, class and filters, its arguments
// added to a. It sits inside each query, before its LIMIT.
func searchFilter(a *args, sc custody.Scope, q custody.SearchQuery) string {
	filter := eligible(a, sc)
	if q.Namespace != "" {
		filter += ` AND r.namespace = ` + a.add(q.Namespace)
	}
	if q.NamespacePrefix != "" {
		filter += ` AND ` + underPrefix(a.add(q.NamespacePrefix))
	}
	if q.Class != "" {
		filter += ` AND r.class = ` + a.add(string(q.Class))
	}
	return filter + filterSQL(a, q.Filters)
}
