package sqlite

import (
	"context"
	"strings"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/embed"
)

// VectorCandidates ranks by vector, as VectorSearch does, the candidates
// the search index finds: the records eligible for sc that pass q's
// filters (in the FTS query, before its LIMIT) and hold one of the terms
// match in body or key, at most candidates of them, best BM25 first. The
// words' rarity is counted as among every record with a vector of model
// (the store's largest such rid: an estimate that costs one index probe).
func (s *Store) VectorCandidates(ctx context.Context, sc custody.Scope, q custody.SearchQuery, model string, terms [][]float32, match []string, candidates int) ([]custody.Ranked, error) {
	fts := ftsTerms(match)
	if q.Limit <= 0 || len(terms) == 0 || fts == "" || candidates <= 0 {
		return nil, nil
	}
	if _, err := s.indexPending(ctx); err != nil {
		return nil, unavailable(err)
	}
	var corpus int64
	if err := s.reader().QueryRowContext(ctx, `SELECT COALESCE(MAX(rid), 0) FROM vectors`).Scan(&corpus); err != nil {
		return nil, unavailable(err)
	}
	filter, args := searchFilter(sc, q)
	scorer := embed.NewTermScorer[string](terms)
	scorer.Corpus(int(corpus))
	query := `SELECT r.id, v.vec FROM records_fts CROSS JOIN records r ON r.rid = records_fts.rowid
 CROSS JOIN vectors v ON v.rid = r.rid AND v.model = ?
 WHERE records_fts MATCH ? AND ` + filter
	qargs := append([]any{model, fts}, args...)
	// Most queries match fewer eligible records than candidates: then
	// all of them are the candidates, in any order, and BM25 need not
	// be computed. Only when there are more are the best by BM25 kept.
	n, err := scanVectors(ctx, s.reader(), scorer, query+` LIMIT ?`, append(qargs, candidates+1)...)
	if err != nil {
		return nil, err
	}
	if n > candidates {
		scorer = embed.NewTermScorer[string](terms)
		scorer.Corpus(int(corpus))
		if _, err := scanVectors(ctx, s.reader(), scorer, query+` ORDER BY bm25(records_fts, 1.0, 0.5) LIMIT ?`, append(qargs, candidates)...); err != nil {
			return nil, err
		}
	}
	return top(scorer, q.Limit), nil
}

// LexicalRanks is Search's ranking (the same query) without reading the
// records.
func (s *Store) LexicalRanks(ctx context.Context, sc custody.Scope, q custody.SearchQuery) ([]custody.Ranked, error) {
	match := ftsQuery(q.Text)
	if match == "" || q.Limit <= 0 {
		return nil, nil
	}
	gen, err := s.indexPending(ctx)
	if err != nil {
		return nil, unavailable(err)
	}
	if out, ok, err := s.lexicalRanksCopy(ctx, sc, q, gen); ok {
		return out, err
	}
	filter, args := searchFilter(sc, q)
	rows, err := s.reader().QueryContext(ctx, `SELECT r.id, bm25(records_fts, 1.0, 0.5) AS score
 FROM records_fts CROSS JOIN records r ON r.rid = records_fts.rowid
 WHERE records_fts MATCH ? AND `+filter+` ORDER BY score LIMIT ?`, append(append([]any{match}, args...), q.Limit)...)
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	var out []custody.Ranked
	for rows.Next() {
		var r custody.Ranked
		if err := rows.Scan(&r.ID, &r.Score); err != nil {
			return nil, unavailable(err)
		}
		r.Score = -r.Score
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, unavailable(err)
	}
	return out, nil
}

// ftsTerms is the FTS5 query for records holding any of the lexical
// terms (internal/lexical) in body or key; "" for none.
func ftsTerms(terms []string) string {
	quoted := make([]string, 0, len(terms))
	for _, t := range terms {
		if t != "" && !strings.ContainsRune(t, '"') {
			quoted = append(quoted, `"`+t+`"`)
		}
	}
	if len(quoted) == 0 {
		return ""
	}
	return `{body key} : (` + strings.Join(quoted, " OR ") + `)`
}
