package sqlite

import (
	"context"

	custody "github.com/custody-mem/custody"
)

// Namespaces lists the namespaces of the records eligible for sc under
// prefix, with the eligibility of Get inside the query.
func (s *Store) Namespaces(ctx context.Context, sc custody.Scope, prefix, after string, limit int) ([]string, error) {
	q := `SELECT DISTINCT r.namespace FROM records r WHERE ` + eligible(len(sc.Groups)) + `
 AND (? = '' OR ` + underPrefix + `) AND r.namespace > ?
 ORDER BY r.namespace LIMIT ?`
	args := append(append(eligibleArgs(sc), prefix), underArgs(prefix)...)
	args = append(args, after, limit)
	rows, err := s.reader().QueryContext(ctx, q, args...)
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var ns string
		if err := rows.Scan(&ns); err != nil {
			return nil, err
		}
		out = append(out, ns)
	}
	return out, rows.Err()
}

// underPrefix is the condition that r.namespace is a namespace or below it,
// by whole segments (work: work and work/notes, not workshop); its
// arguments are underArgs of the namespace. Namespaces, List and Search
// share it, so a prefix means the same on every route.
const underPrefix = `(r.namespace = ? OR substr(r.namespace, 1, length(?) + 1) = ? || '/')`

func underArgs(prefix string) []any { return []any{prefix, prefix, prefix} }
