package postgres

import (
	"context"

	custody "github.com/custody-mem/custody"
)

var _ custody.Neighbourer = (*Store)(nil)

// Neighbours maps each of ids that is an episode of sc's subject to the
// last episode before it and the first after it (by id: write order) of
// the same owner, namespace and session that is eligible for sc and
// passes q's filters, inside the query, and to its session
// (custody.Neighbourer). One statement: two lateral subqueries per id
// walk the owner's episodes of the namespace from it, backward and
// forward, by records_episodes.
// Ids the lexical list's read found to be no episode (s.facts) are left
// out without a query.
func (s *Store) Neighbours(ctx context.Context, sc custody.Scope, q custody.SearchQuery, ids []string) (map[string]custody.Neighbours, error) {
	if ids = s.facts.Unknown(ids); len(ids) == 0 || !storable(sc.Tenant, sc.Subject, q.Namespace, q.NamespacePrefix, string(q.Class)) || !storable(sc.Groups...) || !storable(ids...) {
		return nil, nil
	}
	var a args
	filter := searchFilter(&a, sc, q)
	walk := func(cmp, order string) string {
		return `LEFT JOIN LATERAL (SELECT r.id FROM records r WHERE r.tenant = x.tenant AND r.owner = x.owner AND r.namespace = x.namespace
 AND r.class = 'episode' AND r.id ` + cmp + ` x.id AND r.session = x.session AND ` + filter + ` ORDER BY r.id ` + order + ` LIMIT 1)`
	}
	query := `SELECT x.id, x.session, coalesce(p.id, ''), coalesce(n.id, '') FROM records x
 ` + walk("<", "DESC") + ` p ON true
 ` + walk(">", "ASC") + ` n ON true
 WHERE x.id = ANY(` + a.add(ids) + `::text[]) AND x.class = 'episode' AND x.owner = ` + a.add(sc.Subject)
	rows, err := s.pool.Query(ctx, query, a...)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	out := make(map[string]custody.Neighbours, len(ids))
	for rows.Next() {
		var id, session, prev, next string
		if err := rows.Scan(&id, &session, &prev, &next); err != nil {
			return nil, classify(err)
		}
		out[id] = custody.Neighbours{Prev: prev, Next: next, Session: session}
	}
	return out, classify(rows.Err())
}
