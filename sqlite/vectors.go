package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/embed"
)

// vectorSchema is the table of records' vectors (schema 15): one per
// record, of the model that made it, deleted with the record and when
// its body is erased (the trigger runs in the erasure's transaction).
const vectorSchema = `
CREATE TABLE IF NOT EXISTS vectors (
  rid   INTEGER PRIMARY KEY REFERENCES records (rid) ON DELETE CASCADE,
  model TEXT NOT NULL,
  dim   INTEGER NOT NULL,
  vec   BLOB NOT NULL -- embed.Quantize
);
DROP TRIGGER IF EXISTS vectors_erase;
CREATE TRIGGER vectors_erase AFTER UPDATE OF erased ON records
WHEN NEW.erased BEGIN
  DELETE FROM vectors WHERE rid = NEW.rid;
END;`

var _ custody.VectorStore = (*Store)(nil)

// putChunk is how many vectors one transaction of PutVectors stores: the
// writer is shared with the writes, which wait the less the shorter it is
// held.
const putChunk = 8

// PutVectors stores vectors; a record erased meanwhile gets none (the
// writer is the only one, so the check and the insert are one step).
func (s *Store) PutVectors(ctx context.Context, model string, vs []custody.RecordVector) error {
	for len(vs) > 0 {
		n := min(len(vs), putChunk)
		if err := s.putVectors(ctx, model, vs[:n]); err != nil {
			return err
		}
		vs = vs[n:]
	}
	return nil
}

func (s *Store) putVectors(ctx context.Context, model string, vs []custody.RecordVector) error {
	return s.Update(ctx, func(tx custody.Tx) error {
		t := tx.(*txn)
		for _, v := range vs {
			err := t.exec(ctx, `INSERT INTO vectors (rid, model, dim, vec)
 SELECT rid, ?, ?, ? FROM records WHERE id = ? AND tenant = ? AND NOT erased
 ON CONFLICT (rid) DO UPDATE SET model = excluded.model, dim = excluded.dim, vec = excluded.vec`,
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
	rows, err := s.r.QueryContext(ctx, `SELECT r.tenant, r.id, r.key, r.body FROM records r
 LEFT JOIN vectors v ON v.rid = r.rid AND v.model = ?
 WHERE r.id > ? AND NOT r.erased AND r.body != '' AND v.rid IS NULL ORDER BY r.id LIMIT ?`, model, after, limit)
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	var out []custody.RecordText
	for rows.Next() {
		var r custody.RecordText
		if err := rows.Scan(&r.Tenant, &r.ID, &r.Key, &r.Body); err != nil {
			return nil, unavailable(err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// VectorOf is the model and dimension of a record's vector.
func (s *Store) VectorOf(ctx context.Context, tenant, id string) (string, int, error) {
	var model string
	var dim int
	err := s.r.QueryRowContext(ctx, `SELECT v.model, v.dim FROM vectors v JOIN records r ON r.rid = v.rid WHERE r.id = ? AND r.tenant = ?`, id, tenant).Scan(&model, &dim)
	if err != nil {
		return "", 0, notFound(err)
	}
	return model, dim, nil
}

// DropVectors deletes every vector.
func (s *Store) DropVectors(ctx context.Context) error {
	return s.Update(ctx, func(tx custody.Tx) error { return tx.(*txn).exec(ctx, `DELETE FROM vectors`) })
}

// VectorSearch scans the vectors of model of the records eligible for sc
// (the eligibility filter is in the query, as in Search) and keeps the
// q.Limit most similar. The scan is exact: its cost grows with the
// subject's eligible records (docs/search.md); past maxScan of them (0:
// no bound) it stops and answers custody.ErrScanBound.
func (s *Store) VectorSearch(ctx context.Context, sc custody.Scope, q custody.SearchQuery, model string, terms [][]float32, maxScan int) ([]custody.Ranked, error) {
	if q.Limit <= 0 || len(terms) == 0 {
		return nil, nil
	}
	filter, args := searchFilter(sc, q)
	query := `SELECT r.id, v.vec FROM vectors v JOIN records r ON r.rid = v.rid WHERE v.model = ? AND ` + filter
	qargs := append([]any{model}, args...)
	if maxScan > 0 {
		query += ` LIMIT ?`
		qargs = append(qargs, maxScan+1)
	}
	scorer := embed.NewTermScorer[string](terms)
	n, err := scanVectors(ctx, s.reader(), scorer, query, qargs...)
	if err != nil {
		return nil, err
	}
	if maxScan > 0 && n > maxScan {
		return nil, custody.ErrScanBound
	}
	return top(scorer, q.Limit), nil
}

// querier runs a query: the store's cached statements (reader).
type querier interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

// scanVectors adds the vectors of the rows of query (id, vec) to scorer
// and returns how many rows there were.
func scanVectors(ctx context.Context, db querier, scorer *embed.TermScorer[string], query string, args ...any) (int, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return 0, unavailable(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var id string
		var b sql.RawBytes // scored before the next row: no copy
		if err := rows.Scan(&id, &b); err != nil {
			return 0, unavailable(err)
		}
		n++
		scorer.Add(id, b) // a vector of another dimension is left out: reindex --embeddings
	}
	if err := rows.Err(); err != nil {
		return 0, unavailable(err)
	}
	return n, nil
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

// RankedRecords reads the records of ids that are eligible for sc and
// pass q's filters.
func (s *Store) RankedRecords(ctx context.Context, sc custody.Scope, q custody.SearchQuery, ids []string) ([]*custody.Record, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	filter, args := searchFilter(sc, q)
	// One query text whatever the number of ids (a cached statement);
	// CROSS JOIN: each record looked up by its id, rather than the
	// planner walking an index of the eligibility filter.
	rows, err := s.reader().QueryContext(ctx, `SELECT `+recordCols+` FROM json_each(?) c CROSS JOIN records r ON r.id = c.value WHERE `+filter,
		append([]any{string(list)}, args...)...)
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	var out []*custody.Record
	for rows.Next() {
		r, _, err := scanRecord(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, unavailable(err)
	}
	return out, nil
}
