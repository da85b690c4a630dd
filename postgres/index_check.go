package postgres

import (
	"context"
	"errors"

	custody "github.com/custody-mem/custody"
	"github.com/jackc/pgx/v5"
)

// MisindexedRecord returns a record whose search vector or gate text is
// not the one its body and key make ("" if none), and what is wrong. The
// gate finds the memories that mention a payment's arguments through the
// gate text: a rewritten one hides a memory from the gate while the
// record itself still matches the log. Records are read a page at a time;
// each page's search vectors are rebuilt and compared in one query.
func (t *txn) MisindexedRecord(ctx context.Context) (id, what string, err error) {
	err = t.textPages(ctx, func(p textPage) (bool, error) {
		for i := range p.ids {
			if p.stored[i] != p.norms[i] {
				id, what = p.ids[i], "its text for the gate's lookups is not its own"
				return true, nil
			}
		}
		err := t.tx.QueryRow(ctx, `SELECT x.id FROM unnest($1::text[], $2::text[]) AS x(id, doc) JOIN records r ON r.id = x.id
 WHERE r.search <> x.doc::tsvector ORDER BY x.id LIMIT 1`, p.ids, p.docs).Scan(&id)
		if err == nil {
			what = "its search vector is not its own"
			return true, nil
		}
		if errors.Is(err, pgx.ErrNoRows) {
			return false, nil
		}
		return true, classify(err)
	})
	return id, what, err
}

// textPage is a page of records, in id order, with the gate text and the
// search document their body and key make, and the gate text stored.
type textPage struct {
	ids, norms, docs, stored []string
}

// textPages calls fn on every page of records until it says it is done.
// fn may use the transaction.
func (t *txn) textPages(ctx context.Context, fn func(textPage) (done bool, err error)) error {
	for after := ""; ; {
		rows, err := t.tx.Query(ctx, `SELECT id, body, key, namespace, source_ref, metadata, erased, norm FROM records WHERE id > $1 ORDER BY id LIMIT $2`, after, scanPage)
		if err != nil {
			return classify(err)
		}
		var p textPage
		for rows.Next() {
			var r custody.Record
			var norm, meta string
			if err := rows.Scan(&r.ID, &r.Body, &r.Key, &r.Namespace, &r.SourceRef, &meta, &r.Erased, &norm); err != nil {
				rows.Close()
				return classify(err)
			}
			if r.Metadata, err = custody.ParseMetadata(meta); err != nil {
				rows.Close()
				return err
			}
			p.ids, p.norms, p.docs, p.stored = append(p.ids, r.ID), append(p.norms, normText(&r)), append(p.docs, documentText(&r)), append(p.stored, norm)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return classify(err)
		}
		if done, err := fn(p); done || err != nil || len(p.ids) < scanPage {
			return err
		}
		after = p.ids[len(p.ids)-1]
	}
}
