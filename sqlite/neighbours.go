package sqlite

import (
	"context"
	"database/sql"

	custody "github.com/custody-mem/custody"
)

var _ custody.Neighbourer = (*Store)(nil)

// Neighbours maps each of ids that is an episode of sc's subject to the
// last episode before it and the first after it (by id: write order) of
// the same owner, namespace and session that is eligible for sc and
// passes q's filters, inside the query, and to its session
// (custody.Neighbourer). One statement: two subqueries per id walk the
// owner's episodes of the namespace from it, backward and forward, by
// records_episodes.
// Ids the lexical list's read found to be no episode (s.facts) are left
// out without a query.
func (s *Store) Neighbours(ctx context.Context, sc custody.Scope, q custody.SearchQuery, ids []string) (map[string]custody.Neighbours, error) {
	if ids = s.facts.Unknown(ids); len(ids) == 0 { // no episode among them (internal/factsmemo)
		return nil, nil
	}
	filter, fargs := searchFilter(sc, q)
	walk := func(cmp, order string) string {
		return `(SELECT r.id FROM records r WHERE r.tenant = x.tenant AND r.owner = x.owner AND r.namespace = x.namespace
 AND r.class = 'episode' AND r.id ` + cmp + ` x.id AND r.session = x.session AND ` + filter + ` ORDER BY r.id ` + order + ` LIMIT 1)`
	}
	query := `SELECT x.id, x.session, ` + walk("<", "DESC") + `, ` + walk(">", "ASC") + `
 FROM records x WHERE x.id IN (` + placeholders(len(ids)) + `) AND x.class = 'episode' AND x.owner = ?`
	args := make([]any, 0, 2*len(fargs)+len(ids)+1)
	args = append(append(args, fargs...), fargs...)
	for _, id := range ids {
		args = append(args, id)
	}
	rows, err := s.reader().QueryContext(ctx, query, append(args, sc.Subject)...)
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	out := make(map[string]custody.Neighbours, len(ids))
	for rows.Next() {
		var id, session string
		var prev, next sql.NullString
		if err := rows.Scan(&id, &session, &prev, &next); err != nil {
			return nil, unavailable(err)
		}
		out[id] = custody.Neighbours{Prev: prev.String, Next: next.String, Session: session}
	}
	if err := rows.Err(); err != nil {
		return nil, unavailable(err)
	}
	return out, nil
}
