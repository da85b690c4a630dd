package postgres

import (
	"context"

	custody "github.com/custody-mem/custody"
)

// Namespaces lists the namespaces of the records eligible for sc under
// prefix, with the eligibility of Get inside the query.
func (s *Store) Namespaces(ctx context.Context, sc custody.Scope, prefix, after string, limit int) ([]string, error) {
	if !storable(sc.Tenant, sc.Subject, prefix, after) {
		return nil, nil
	}
	var a args
	q := `SELECT DISTINCT r.namespace COLLATE "C" AS ns FROM records r WHERE ` + eligible(&a, sc)
	p := a.add(prefix)
	q += ` AND (` + p + ` = '' OR ` + underPrefix(p) + `)
 AND r.namespace COLLATE "C" > ` + a.add(after) + ` ORDER BY ns LIMIT ` + a.add(limit)
	rows, err := s.pool.Query(ctx, q, a...)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var ns string
		if err := rows.Scan(&ns); err != nil {
			return nil, classify(err)
		}
		out = append(out, ns)
	}
	return out, classify(rows.Err())
}

// underPrefix is the condition that r.namespace is the namespace in
// parameter p or below it, by whole segments (work: work and work/notes,
// not workshop). Namespaces, List and Search share it, so a prefix means
// the same on every route.
func underPrefix(p string) string {
	return `(r.namespace = ` + p + ` OR left(r.namespace, length(` + p + `) + 1) = ` + p + ` || '/')`
}
