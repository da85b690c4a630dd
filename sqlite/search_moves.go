package sqlite

import (
	"context"
	"database/sql"

	"github.com/custody-mem/custody/internal/postings"
)

// The copy of the search index keeps each record in the partition of the
// callers who may retrieve it, and the records no one may retrieve
// (quarantined, retired, an older version of a key) in deadPart, so that
// no search's statistics count them (search_index.go). A record's state,
// head and audience change after it is indexed: a review admits it, a
// newer version demotes it, its owner shares it. The trigger
// records_search_moved (schema 23) lists each such record in
// search_moved, whatever statement changed it, and the transaction's
// commit moves them in the copy with its other changes.

// searchMoves takes the records search_moved lists out of it and notes,
// for the copy, the partition each is in now.
func (t *txn) searchMoves(ctx context.Context) error {
	rows, err := t.QueryContext(ctx, `DELETE FROM search_moved RETURNING rid`)
	if err != nil {
		return err
	}
	var rids []int64
	for rows.Next() {
		var rid int64
		if err := rows.Scan(&rid); err != nil {
			rows.Close()
			return err
		}
		rids = append(rids, rid)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(rids) == 0 {
		return err
	}
	rows, err = t.QueryContext(ctx, `SELECT r.rid, r.tenant, r.owner, r.audience, r.state, r.head, r.key FROM records r
 WHERE r.rid IN (SELECT value FROM json_each(?)) AND NOT r.erased`, jsonText(rids))
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var rid int64
		var tenant, owner, audience, state, key string
		var head bool
		if err := rows.Scan(&rid, &tenant, &owner, &audience, &state, &head, &key); err != nil {
			return err
		}
		t.changedIndex(indexOp{rid: rid, move: true, at: postings.Place{Part: searchPart(tenant, owner, audience, searchLive(state, head, key))}})
	}
	return rows.Err()
}

// expiresAt is a record's expiry as the copy keeps it (Place.Expires):
// Unix nanoseconds, 0 for none.
func expiresAt(v sql.NullInt64) int64 {
	if !v.Valid {
		return 0
	}
	return v.Int64
}
