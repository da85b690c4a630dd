package sqlite

import (
	"context"
	"database/sql"

	custody "github.com/custody-mem/custody"
)

// Following maps each of ids that is an episode of sc's subject to the
// first episode after it (by id: write order) of the same owner and
// namespace that is eligible for sc and passes q's filters, inside the
// query (custody.Follower). One statement: a subquery per id walks the
// owner's episodes of the namespace from it by records_episodes.
func (s *Store) Following(ctx context.Context, sc custody.Scope, q custody.SearchQuery, ids []string) (map[string]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	filter, args := searchFilter(sc, q)
	query := `SELECT x.id, (SELECT r.id FROM records r WHERE r.tenant = x.tenant AND r.owner = x.owner AND r.id > x.id
 AND r.namespace = x.namespace AND r.class = 'episode' AND ` + filter + ` ORDER BY r.id LIMIT 1)
 FROM records x WHERE x.id IN (` + placeholders(len(ids)) + `) AND x.class = 'episode' AND x.owner = ?`
	for _, id := range ids {
		args = append(args, id)
	}
	rows, err := s.reader().QueryContext(ctx, query, append(args, sc.Subject)...)
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id string
		var next sql.NullString
		if err := rows.Scan(&id, &next); err != nil {
			return nil, unavailable(err)
		}
		if next.Valid {
			out[id] = next.String
		}
	}
	if err := rows.Err(); err != nil {
		return nil, unavailable(err)
	}
	return out, nil
}

// TermMatches counts, for each of the lexical terms, the records sc may
// retrieve whose body or key holds it, counting at most bound of each
// (custody.TermCounter): the search index alone, no record read.
func (s *Store) TermMatches(ctx context.Context, sc custody.Scope, terms []string, bound int) ([]int, error) {
	if len(terms) == 0 {
		return nil, nil
	}
	at, err := s.searchAt(ctx)
	if err != nil {
		return nil, unavailable(err)
	}
	if out, ok := s.termMatchesCopy(sc, terms, bound, at); ok {
		return out, nil
	}
	if err := s.pendingToFTS(ctx); err != nil {
		return nil, unavailable(err)
	}
	_, _, holding, err := s.visibleStats(ctx, sc, terms, bound)
	if err != nil {
		return nil, err
	}
	out := make([]int, len(terms))
	for i, n := range holding {
		out[i] = int(n)
	}
	return out, nil
}
