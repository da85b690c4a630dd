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
	after := ""
	for {
		rows, err := t.tx.Query(ctx, `SELECT id, body, key, erased, norm FROM records WHERE id > $1 ORDER BY id LIMIT $2`, after, scanPage)
		if err != nil {
			return "", "", classify(err)
		}
		var ids, docs []string
		for rows.Next() {
			var r custody.Record
			var norm string
			if err := rows.Scan(&r.ID, &r.Body, &r.Key, &r.Erased, &norm); err != nil {
				rows.Close()
				return "", "", classify(err)
			}
			if norm != normText(&r) {
				rows.Close()
				return r.ID, "its text for the gate's lookups is not its own", nil
			}
			ids, docs = append(ids, r.ID), append(docs, documentText(&r))
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return "", "", classify(err)
		}
		err = t.tx.QueryRow(ctx, `SELECT x.id FROM unnest($1::text[], $2::text[]) AS x(id, doc) JOIN records r ON r.id = x.id
 WHERE r.search <> to_tsvector('simple', x.doc) ORDER BY x.id LIMIT 1`, ids, docs).Scan(&id)
		if err == nil {
			return id, "its search vector is not its own", nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return "", "", classify(err)
		}
		if len(ids) < scanPage {
			return "", "", nil
		}
		after = ids[len(ids)-1]
	}
}
