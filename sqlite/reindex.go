package sqlite

import (
	"context"
	"fmt"

	custody "github.com/custody-mem/custody"
)

// isHead is whether the record aliased a is the newest admitted version of
// its key: what its head flag must say. (The key's other versions are
// sought through records_ns_key, which holds keyed records only.)
func isHead(a string) string {
	return fmt.Sprintf(`(%[1]s.key != '' AND %[1]s.state = 'admitted' AND NOT EXISTS (SELECT 1 FROM records n
 WHERE n.tenant = %[1]s.tenant AND n.owner = %[1]s.owner AND n.namespace = %[1]s.namespace AND n.key = %[1]s.key
   AND n.key != '' AND n.version > %[1]s.version AND n.state = 'admitted'))`, a)
}

// reindexPage is how many records Reindex reads at a time.
const reindexPage = 1000

// Reindex rebuilds, in one transaction through the writer, what the store
// derives from the records: the head flags, the lineage edges (with their
// rows) and both FTS5 indexes, whose records are queued in index_pending
// as any write's and moved in at the end.
func (s *Store) Reindex(ctx context.Context, progress func(done, total uint64)) error {
	return s.Update(ctx, func(tx custody.Tx) error { return tx.(*txn).reindex(ctx, progress) })
}

func (t *txn) reindex(ctx context.Context, progress func(done, total uint64)) error {
	for _, q := range []string{
		`UPDATE records SET head = ` + isHead("records") + ` WHERE head IS NOT ` + isHead("records"),
		`DELETE FROM edges`,
		`INSERT INTO edges (tenant, parent, child, weight, child_rid)
 SELECT r.tenant, p.value ->> '$.id', r.id, p.value ->> '$.weight', r.rid FROM records r, json_each(r.parents) p`,
		`INSERT INTO records_fts (records_fts) VALUES ('delete-all')`,
		`INSERT INTO records_tri (records_tri) VALUES ('delete-all')`,
		`DELETE FROM index_pending`,
	} {
		if err := t.exec(ctx, q); err != nil {
			return err
		}
	}
	t.changedIndex(indexOp{reset: true})
	var total uint64
	if err := t.QueryRowContext(ctx, `SELECT COUNT(*) FROM records`).Scan(&total); err != nil {
		return err
	}
	var done uint64
	for after := int64(0); ; {
		var page []*custody.Record
		var rids []int64
		rows, err := t.QueryContext(ctx, `SELECT rid, body, key, namespace, source_ref, metadata, erased FROM records WHERE rid > ? ORDER BY rid LIMIT ?`, after, reindexPage)
		if err != nil {
			return err
		}
		for rows.Next() {
			var r custody.Record
			var rid int64
			var meta string
			if err := rows.Scan(&rid, &r.Body, &r.Key, &r.Namespace, &r.SourceRef, &meta, &r.Erased); err != nil {
				rows.Close()
				return err
			}
			if r.Metadata, err = custody.ParseMetadata(meta); err != nil {
				rows.Close()
				return err
			}
			page, rids = append(page, &r), append(rids, rid)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for i, r := range page {
			if err := t.index(ctx, rids[i], r); err != nil {
				return err
			}
		}
		done += uint64(len(page))
		if progress != nil {
			progress(done, total)
		}
		if len(page) < reindexPage {
			break
		}
		after = rids[len(rids)-1]
	}
	_, err := t.flushPending(ctx)
	return err
}

var _ custody.Reindexer = (*Store)(nil)
