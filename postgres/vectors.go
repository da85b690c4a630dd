package postgres

import (
	"context"
	"fmt"
	"sort"

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
// (the eligibility filter in the query, as in Search), keeps the q.Limit
// most similar and reads those records, eligible still, in the same
// snapshot. The scan is exact (docs/search.md).
func (s *Store) VectorSearch(ctx context.Context, sc custody.Scope, q custody.SearchQuery, model string, terms [][]float32) ([]custody.Scored, error) {
	if q.Limit <= 0 || len(terms) == 0 || !storable(sc.Tenant, sc.Subject, q.Namespace, q.NamespacePrefix, string(q.Class), model) || !storable(sc.Groups...) {
		return nil, nil
	}
	var out []custody.Scored
	err := s.View(ctx, func(tx custody.Tx) error {
		t := tx.(*txn)
		var a args
		m := a.add(model)
		filter := vectorFilter(&a, sc, q)
		rows, err := t.tx.Query(ctx, `SELECT r.id, v.vec FROM vectors v JOIN records r ON r.id = v.id WHERE v.model = `+m+` AND `+filter, a...)
		if err != nil {
			return classify(err)
		}
		scorer := embed.NewTermScorer[string](terms)
		for rows.Next() {
			var id string
			var b []byte
			if err := rows.Scan(&id, &b); err != nil {
				rows.Close()
				return classify(err)
			}
			scorer.Add(id, b) // a vector of another dimension is left out: reindex --embeddings
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return classify(err)
		}
		ids, scores := scorer.Top(q.Limit)
		if len(ids) == 0 {
			return nil
		}
		sims := map[string]float32{}
		for i, id := range ids {
			sims[id] = scores[i]
		}
		var b args
		query := `SELECT ` + recordCols + ` FROM records r WHERE r.id = ANY(` + b.add(ids) + `::text[]) AND ` + vectorFilter(&b, sc, q)
		recs, err := queryRecords(ctx, t.tx, query, b...)
		if err != nil {
			return err
		}
		for _, r := range recs {
			out = append(out, custody.Scored{Record: r, Score: float64(sims[r.ID])})
		}
		return nil
	})
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].ID > out[j].ID
	})
	return out, err
}

// vectorFilter is the eligibility filter of sc and q's filters.
func vectorFilter(a *args, sc custody.Scope, q custody.SearchQuery) string {
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
