package postgres

import (
	"context"
	"strings"

	custody "github.com/custody-mem/custody"
)

// Following maps each of ids that is an episode of sc's subject to the
// first episode after it (by id: write order) of the same owner and
// namespace that is eligible for sc and passes q's filters, inside the
// query (custody.Follower). One statement: a lateral subquery per id walks
// the owner's episodes of the namespace from it by records_episodes.
func (s *Store) Following(ctx context.Context, sc custody.Scope, q custody.SearchQuery, ids []string) (map[string]string, error) {
	if len(ids) == 0 || !storable(sc.Tenant, sc.Subject, q.Namespace, q.NamespacePrefix, string(q.Class)) || !storable(sc.Groups...) || !storable(ids...) {
		return nil, nil
	}
	var a args
	query := `SELECT x.id, n.id FROM records x CROSS JOIN LATERAL (SELECT r.id FROM records r
 WHERE r.tenant = x.tenant AND r.owner = x.owner AND r.id > x.id AND r.namespace = x.namespace AND r.class = 'episode' AND ` + searchFilter(&a, sc, q) + `
 ORDER BY r.id LIMIT 1) n WHERE x.id = ANY(` + a.add(ids) + `::text[]) AND x.class = 'episode' AND x.owner = ` + a.add(sc.Subject)
	rows, err := s.pool.Query(ctx, query, a...)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, next string
		if err := rows.Scan(&id, &next); err != nil {
			return nil, classify(err)
		}
		out[id] = next
	}
	return out, classify(rows.Err())
}

// TermMatches counts, for each of the lexical terms, the records sc may
// retrieve whose search vector holds it, counting at most bound of each
// (custody.TermCounter): eligibility is inside each count. The tenant's
// copy counts them when it can (termMatchesCopy), else PostgreSQL does.
func (s *Store) TermMatches(ctx context.Context, sc custody.Scope, terms []string, bound int) ([]int, error) {
	if len(terms) == 0 {
		return nil, nil
	}
	if !storable(terms...) || !storable(sc.Tenant, sc.Subject) || !storable(sc.Groups...) { // no record holds such a term, or is theirs
		return make([]int, len(terms)), nil
	}
	if out, ok, err := s.termMatchesCopy(ctx, sc, terms, bound); ok || err != nil {
		return out, err
	}
	var a args
	cols := make([]string, len(terms))
	for i, t := range terms {
		cols[i] = `(SELECT count(*) FROM (SELECT 1 FROM records r WHERE r.search @@ ` + a.add(tsTerms([]string{t})) + `::text::tsquery AND ` +
			eligible(&a, sc) + ` LIMIT ` + a.add(bound) + `) x)`
	}
	out := make([]int64, len(terms))
	dst := make([]any, len(terms))
	for i := range out {
		dst[i] = &out[i]
	}
	if err := s.pool.QueryRow(ctx, `SELECT `+strings.Join(cols, ", "), a...).Scan(dst...); err != nil {
		return nil, classify(err)
	}
	n := make([]int, len(out))
	for i, v := range out {
		n[i] = int(v)
	}
	return n, nil
}
