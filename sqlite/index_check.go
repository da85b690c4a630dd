package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"unicode/utf8"

	custody "github.com/custody-mem/custody"
)

// MisindexedRecord returns a record whose rows in the search index or the
// gate's trigram index are missing, left behind or not its own ("" if
// none), and what is wrong. The gate traces a payment's arguments to the
// memories that mention them through the trigram index: a row deleted
// from it hides a memory from the gate while the record itself still
// matches the log. The indexes keep no text (they are contentless), so a
// row is checked by its size: an indexed record must have as many
// trigrams as its text (custody.RecordGateIndex), and a pending one
// (pending.go) its text itself, and no row in either index.
func (t *txn) MisindexedRecord(ctx context.Context) (id, what string, err error) {
	var rid int64
	err = t.QueryRowContext(ctx, `SELECT what, rid FROM (
   SELECT 'the search index holds a row, but no live record is there' AS what, d.id AS rid
     FROM records_fts_docsize d LEFT JOIN records r ON r.rid = d.id WHERE r.rid IS NULL OR r.erased
   UNION ALL SELECT 'the gate''s trigram index holds a row, but no live record is there', d.id
     FROM records_tri_docsize d LEFT JOIN records r ON r.rid = d.id WHERE r.rid IS NULL OR r.erased
   UNION ALL SELECT 'a row waits for the indexes, but no live record is there', p.rid
     FROM index_pending p LEFT JOIN records r ON r.rid = p.rid WHERE r.rid IS NULL OR r.erased
   UNION ALL SELECT 'a record waiting for the indexes already has a row in the search index', p.rid
     FROM index_pending p JOIN records_fts_docsize d ON d.id = p.rid
   UNION ALL SELECT 'a record waiting for the indexes already has a row in the gate''s trigram index', p.rid
     FROM index_pending p JOIN records_tri_docsize d ON d.id = p.rid)
 LIMIT 1`).Scan(&what, &rid)
	if err == nil {
		return fmt.Sprintf("at row %d", rid), what, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", "", err
	}
	rows, err := t.QueryContext(ctx, `SELECT r.id, r.body, r.key, r.namespace, r.source_ref, r.metadata, f.id IS NOT NULL, d.sz, p.norm FROM records r
 LEFT JOIN records_fts_docsize f ON f.id = r.rid LEFT JOIN records_tri_docsize d ON d.id = r.rid
 LEFT JOIN index_pending p ON p.rid = r.rid WHERE NOT r.erased ORDER BY r.rid`)
	if err != nil {
		return "", "", err
	}
	defer rows.Close()
	for rows.Next() {
		var r custody.Record
		var meta string
		var searched bool
		var size []byte
		var pending sql.NullString
		if err := rows.Scan(&id, &r.Body, &r.Key, &r.Namespace, &r.SourceRef, &meta, &searched, &size, &pending); err != nil {
			return "", "", err
		}
		if r.Metadata, err = custody.ParseMetadata(meta); err != nil {
			return id, "its metadata cannot be read", nil
		}
		text := custody.RecordGateIndex(&r)
		switch {
		case pending.Valid && pending.String != text:
			return id, "its text waiting for the indexes is not its own", nil
		case pending.Valid:
		case !searched:
			return id, "it has no row in the search index", nil
		case size == nil:
			return id, "it has no row in the gate's trigram index", nil
		default:
			if n, want := varint(size), max(utf8.RuneCountInString(text)-2, 0); n != uint64(want) {
				return id, fmt.Sprintf("its row in the gate's trigram index holds %d trigrams; its text has %d", n, want), nil
			}
		}
	}
	return "", "", rows.Err()
}

// varint decodes the first SQLite varint in b (FTS5 keeps column sizes so).
func varint(b []byte) uint64 {
	var v uint64
	for i, c := range b {
		if i == 8 {
			return v<<8 | uint64(c)
		}
		v = v<<7 | uint64(c&0x7f)
		if c&0x80 == 0 {
			break
		}
	}
	return v
}
