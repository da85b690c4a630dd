package postgres

import (
	"context"
	"fmt"
	"strings"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/embed"
)

var _ custody.VectorStore = (*Store)(nil)

// PutVectors stores vectors (migration 009); a record erased meanwhile
// gets none: each vector is stored under its tenant's lock, which an
// erasure holds too, so the check and the insert are one step.
func (s *Store) PutVectors(ctx context.Context, model string, vs []custody.RecordVector) error {
	return s.Update(ctx, func(tx custody.Tx) error {
		l := tx.(*lockedTx)
		t := l.t
		for _, v := range vs {
			if !storable(v.ID, v.Tenant) {
				continue
			}
			if err := l.lock(ctx, v.Tenant); err != nil {
				return err
			}
			err := t.exec(ctx, `INSERT INTO vectors (id, model, dim, vec)
 SELECT id, $1, $2, $3 FROM records WHERE id = $4 AND tenant = $5 AND NOT erased
 ON CONFLICT (id) DO UPDATE SET model = excluded.model, dim = excluded.dim, vec = excluded.vec`,
				model, len(v.Vec), embed.Quantize(v.Vec), v.ID, v.Tenant)
			if err != nil {
				return fmt.Errorf("storing the vector of %s: %w", v.ID, err)
			}
		}
		return nil
	})
}

// Unembedded lists records with a body and without a vector of model.
func (s *Store) Unembedded(ctx context.Context, model, after string, limit int) ([]custody.RecordText, error) {
	rows, err := s.pool.Query(ctx, `SELECT r.tenant, r.id, r.key, r.body FROM records r
 WHERE r.id > $1 AND NOT r.erased AND r.body != ''
 AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.id = r.id AND v.model = $2) ORDER BY r.id LIMIT $3`, after, model, limit)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	var out []custody.RecordText
	for rows.Next() {
		var r custody.RecordText
		if err := rows.Scan(&r.Tenant, &r.ID, &r.Key, &r.Body); err != nil {
			return nil, classify(err)
		}
		out = append(out, r)
	}
	return out, classify(rows.Err())
}

// VectorOf is the model and dimension of a record's vector.
func (s *Store) VectorOf(ctx context.Context, tenant, id string) (string, int, error) {
	if !storable(tenant, id) {
		return "", 0, custody.ErrNotFound
	}
	var model string
	var dim int
	err := s.pool.QueryRow(ctx, `SELECT v.model, v.dim FROM vectors v JOIN records r ON r.id = v.id WHERE r.id = $1 AND r.tenant = $2`, id, tenant).Scan(&model, &dim)
	if err != nil {
		return "", 0, notFound(err)
	}
	return model, dim, nil
}

// DropVectors deletes every vector.
func (s *Store) DropVectors(ctx context.Context) error {
	return s.Update(ctx, func(tx custody.Tx) error {
		l := tx.(*lockedTx)
		if err := l.lock(ctx, ""); err != nil { // every tenant's vectors
			return err
		}
		return l.t.exec(ctx, `DELETE FROM vectors`)
	})
}

// VectorSearch scans the vectors of model of the records eligible for sc
// (the eligibility filter in the query, as in Search) and keeps the
// q.Limit most similar. The scan is exact (docs/search.md); past maxScan
// eligible records (0: no bound) it stops and answers
// custody.ErrScanBound.
func (s *Store) VectorSearch(ctx context.Context, sc custody.Scope, q custody.SearchQuery, model string, terms [][]float32, maxScan int) ([]custody.Ranked, error) {
	if q.Limit <= 0 || len(terms) == 0 || !storable(sc.Tenant, sc.Subject, q.Namespace, q.NamespacePrefix, string(q.Class), model) || !storable(sc.Groups...) {
		return nil, nil
	}
	var a args
	m := a.add(model)
	query := `SELECT r.id, v.vec FROM vectors v JOIN records r ON r.id = v.id WHERE v.model = ` + m + ` AND ` + searchFilter(&a, sc, q)
	if maxScan > 0 {
		query += ` LIMIT ` + a.add(maxScan+1)
	}
	scorer := embed.NewTermScorer[string](terms)
	n, err := s.scanVectors(ctx, scorer, query, a...)
	if err != nil {
		return nil, err
	}
	if maxScan > 0 && n > maxScan {
		return nil, custody.ErrScanBound
	}
	return top(scorer, q.Limit), nil
}

// VectorCandidates ranks by vector, as VectorSearch does, the candidates
// the search index finds: the records eligible for sc that pass q's
// filters (in the text search query, before its LIMIT) and hold one of
// the terms match, at most candidates of them, best ts_rank_cd first. The
// words' rarity is counted as among the records sc may retrieve (the
// tenant's copy counts them; without it, a count with the eligibility
// condition), never among any other.
func (s *Store) VectorCandidates(ctx context.Context, sc custody.Scope, q custody.SearchQuery, model string, terms [][]float32, match []string, candidates int) ([]custody.Ranked, error) {
	tsq := tsTerms(match)
	if q.Limit <= 0 || len(terms) == 0 || tsq == "" || candidates <= 0 || !storable(sc.Tenant, sc.Subject, q.Namespace, q.NamespacePrefix, string(q.Class), model) || !storable(sc.Groups...) {
		return nil, nil
	}
	corpus, err := s.visibleRecords(ctx, sc)
	if err != nil {
		return nil, err
	}
	var a args
	m := a.add(model)
	query := `SELECT r.id, v.vec FROM records r JOIN vectors v ON v.id = r.id AND v.model = ` + m + `,
 (SELECT ` + a.add(tsq) + `::text::tsquery) AS x(q)
 WHERE r.search @@ q AND ` + searchFilter(&a, sc, q) + ` ORDER BY ts_rank_cd(r.search, q, 1) DESC, r.id DESC LIMIT ` + a.add(candidates)
	scorer := embed.NewTermScorer[string](terms)
	scorer.Corpus(int(corpus))
	if _, err := s.scanVectors(ctx, scorer, query, a...); err != nil {
		return nil, err
	}
	return top(scorer, q.Limit), nil
}

// CandidateTexts reads the keys and bodies of the candidates the search
// index finds, as VectorCandidates does, for every record eligible for
// sc (no vector is needed), the eligibility filter inside the query.
func (s *Store) CandidateTexts(ctx context.Context, sc custody.Scope, q custody.SearchQuery, match []string, candidates int, fn func(c *custody.CandidateText)) (int, error) {
	tsq := tsTerms(match)
	if tsq == "" || candidates <= 0 || !storable(sc.Tenant, sc.Subject, q.Namespace, q.NamespacePrefix, string(q.Class)) || !storable(sc.Groups...) {
		return 0, nil
	}
	corpus, err := s.visibleRecords(ctx, sc)
	if err != nil {
		return 0, err
	}
	if terms := copyTerms(match); len(terms) > 0 {
		if ok, err := s.candidateTextsCopy(ctx, sc, q, terms, candidates, fn); ok || err != nil {
			return int(corpus), err
		}
	}
	var a args
	query := `SELECT r.id, r.key, r.body FROM records r, (SELECT ` + a.add(tsq) + `::text::tsquery) AS x(q)
 WHERE r.search @@ q AND ` + searchFilter(&a, sc, q) + ` ORDER BY ts_rank_cd(r.search, q, 1) DESC, r.id DESC LIMIT ` + a.add(candidates)
	rows, err := s.pool.Query(ctx, query, a...)
	if err != nil {
		return 0, classify(err)
	}
	defer rows.Close()
	for rows.Next() {
		var c custody.CandidateText
		if err := rows.Scan(&c.ID, &c.Key, &c.Body); err != nil {
			return 0, classify(err)
		}
		fn(&c)
	}
	return int(corpus), classify(rows.Err())
}

// LexicalRanks is Search's ranking (the same query) without reading the
// records.
func (s *Store) LexicalRanks(ctx context.Context, sc custody.Scope, q custody.SearchQuery) ([]custody.Ranked, error) {
	tsq := tsQuery(q.Text)
	if tsq == "" || q.Limit <= 0 || !storable(sc.Tenant, sc.Subject, q.Namespace, q.NamespacePrefix, string(q.Class)) || !storable(sc.Groups...) {
		return nil, nil
	}
	if out, ok, err := s.lexicalRanksCopy(ctx, sc, q); ok || err != nil {
		return out, err
	}
	var a args
	query := `SELECT r.id, ts_rank_cd(r.search, q, 1) AS score
 FROM records r, (SELECT ` + a.add(tsq) + `::text::tsquery) AS x(q)
 WHERE r.search @@ q AND ` + searchFilter(&a, sc, q) + ` ORDER BY score DESC, r.id DESC LIMIT ` + a.add(q.Limit)
	rows, err := s.pool.Query(ctx, query, a...)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	var out []custody.Ranked
	for rows.Next() {
		var id string
		var score float32
		if err := rows.Scan(&id, &score); err != nil {
			return nil, classify(err)
		}
		out = append(out, custody.Ranked{ID: id, Score: float64(score)})
	}
	return out, classify(rows.Err())
}

// RankedRecords reads the records of ids that are eligible for sc and
// pass q's filters.
func (s *Store) RankedRecords(ctx context.Context, sc custody.Scope, q custody.SearchQuery, ids []string) ([]*custody.Record, error) {
	if len(ids) == 0 || !storable(sc.Tenant, sc.Subject, q.Namespace, q.NamespacePrefix, string(q.Class)) || !storable(sc.Groups...) || !storable(ids...) {
		return nil, nil
	}
	var a args
	query := `SELECT ` + recordCols + ` FROM records r WHERE r.id = ANY(` + a.add(ids) + `::text[]) AND ` + searchFilter(&a, sc, q)
	return queryRecords(ctx, s.pool, query, a...)
}

// scanVectors adds the vectors of the rows of query (id, vec) to scorer
// and returns how many rows there were.
func (s *Store) scanVectors(ctx context.Context, scorer *embed.TermScorer[string], query string, a ...any) (int, error) {
	rows, err := s.pool.Query(ctx, query, a...)
	if err != nil {
		return 0, classify(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var id string
		var b []byte
		if err := rows.Scan(&id, &b); err != nil {
			return 0, classify(err)
		}
		n++
		scorer.Add(id, b) // a vector of another dimension is left out: reindex --embeddings
	}
	return n, classify(rows.Err())
}

// top is the limit best of scorer's records, best first.
func top(scorer *embed.TermScorer[string], limit int) []custody.Ranked {
	ids, scores := scorer.Top(limit)
	out := make([]custody.Ranked, len(ids))
	for i, id := range ids {
		out[i] = custody.Ranked{ID: id, Score: float64(scores[i])}
	}
	return out
}

// tsTerms is the tsquery for records holding any of the lexical terms
// (internal/lexical); "" for none.
func tsTerms(terms []string) string {
	ts := make([]string, 0, len(terms))
	for _, t := range terms {
		if t != "" {
			ts = append(ts, quoteLexeme(t))
		}
	}
	return strings.Join(ts, " | ")
}

// copyTerms are the terms of terms the copy ranks by, as the SQLite store
// takes them for its candidates: none empty, none holding a quote (the
// lexical index's phrase of an identifier's parts, which the copy holds
// as no term).
func copyTerms(terms []string) []string {
	out := make([]string, 0, len(terms))
	for _, t := range terms {
		if t != "" && !strings.ContainsRune(t, '"') {
			out = append(out, t)
		}
	}
	return out
}
