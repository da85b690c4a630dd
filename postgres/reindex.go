package postgres

import (
	"context"

	custody "github.com/custody-mem/custody"
)

// Reindex rebuilds, in one transaction, what the store derives from the
// records: the lineage edges, and each record's gate text and search
// vector (rewritten only where they differ).
func (s *Store) Reindex(ctx context.Context, progress func(done, total uint64)) error {
	return s.Update(ctx, func(tx custody.Tx) error {
		l := tx.(*lockedTx)
		if err := l.lock(ctx, ""); err != nil { // every tenant's records
			return err
		}
		return l.t.reindex(ctx, progress)
	})
}

func (t *txn) reindex(ctx context.Context, progress func(done, total uint64)) error {
	if err := t.exec(ctx, `DELETE FROM edges`); err != nil {
		return err
	}
	if err := t.exec(ctx, `INSERT INTO edges (tenant, parent, child, weight)
 SELECT r.tenant, p ->> 'id', r.id, (p ->> 'weight')::double precision FROM records r, jsonb_array_elements(r.parents::jsonb) p`); err != nil {
		return err
	}
	var total uint64
	if err := t.tx.QueryRow(ctx, `SELECT COUNT(*) FROM records`).Scan(&total); err != nil {
		return classify(err)
	}
	var done uint64
	return t.textPages(ctx, func(p textPage) (bool, error) {
		if err := t.exec(ctx, `UPDATE records r SET norm = x.norm, search = x.doc::tsvector
 FROM unnest($1::text[], $2::text[], $3::text[]) AS x(id, norm, doc)
 WHERE r.id = x.id AND (r.norm <> x.norm OR r.search <> x.doc::tsvector)`, p.ids, p.norms, p.docs); err != nil {
			return true, err
		}
		done += uint64(len(p.ids))
		if progress != nil {
			progress(done, total)
		}
		return false, nil
	})
}

var _ custody.Reindexer = (*Store)(nil)
