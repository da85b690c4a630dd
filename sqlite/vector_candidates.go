package sqlite

import (
	"context"
	"database/sql"
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
	gen, err := s.indexPending(ctx)
	if err != nil {
		return nil, unavailable(err)
	}
	var corpus int64
	if err := s.reader().QueryRowContext(ctx, `SELECT COALESCE(MAX(rid), 0) FROM vectors`).Scan(&corpus); err != nil {
		return nil, unavailable(err)
	}
	scorer := embed.NewTermScorer[string](terms)
	scorer.Corpus(int(corpus))
	if ok, err := s.vectorCandidatesCopy(ctx, sc, q, model, scorer, match, candidates, gen); ok {
		if err != nil {
			return nil, err
		}
		return top(scorer, q.Limit), nil
	}
	filter, args := searchFilter(sc, q)
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

// vectorCandidatesCopy is VectorCandidates's candidates found with the
// copy of the search index: the best candidates by BM25 of the records
// with a vector of model that hold one of the terms (all of them if
// fewer), given to scorer. ok is false if the copy cannot rank them.
func (s *Store) vectorCandidatesCopy(ctx context.Context, sc custody.Scope, q custody.SearchQuery, model string, scorer *embed.TermScorer[string], match []string, candidates int, gen int64) (bool, error) {
	var terms []string
	for _, t := range match {
		if t != "" && !strings.ContainsRune(t, '"') {
			terms = append(terms, t)
		}
	}
	cq := q
	cq.Limit = candidates
	best, ok, err := s.bestEligible(ctx, sc, cq, terms, gen, `EXISTS (SELECT 1 FROM vectors v WHERE v.rid = r.rid AND v.model = ?)`, model)
	if !ok || err != nil || len(best) == 0 {
		return ok, err
	}
	ids := make(map[int64]string, len(best))
	for _, b := range best {
		ids[b.rid] = b.id
	}
	for rest := best; len(rest) > 0; {
		n := checkSize(len(rest))
		chunk := rest[:min(n, len(rest))]
		rest = rest[len(chunk):]
		args := make([]any, 0, n)
		for _, b := range chunk {
			args = append(args, b.rid)
		}
		for len(args) < n {
			args = append(args, args[0])
		}
		rows, err := s.reader().QueryContext(ctx, `SELECT v.rid, v.vec FROM vectors v WHERE v.rid IN (`+placeholders(n)+`) AND v.model = ?`, append(args, model)...)
		if err != nil {
			return true, unavailable(err)
		}
		for rows.Next() {
			var rid int64
			var b sql.RawBytes // scored before the next row: no copy
			if err := rows.Scan(&rid, &b); err != nil {
				rows.Close()
				return true, unavailable(err)
			}
			scorer.Add(ids[rid], b)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return true, unavailable(err)
		}
	}
	return true, nil
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
