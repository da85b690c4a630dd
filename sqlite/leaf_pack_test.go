package sqlite_test

import (
	"bytes"
	"path/filepath"
	"reflect"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/tlog"
)

// packedLeaves counts the rows of log_leaves that are stored packed, and
// all rows.
func packedLeaves(t *testing.T, st *sqlite.Store) (packed, all int) {
	t.Helper()
	err := st.DB().QueryRowContext(t.Context(), `SELECT COUNT(*) FILTER (WHERE substr(data, 1, 2) = x'0001'), COUNT(*) FROM log_leaves`).Scan(&packed, &all)
	if err != nil {
		t.Fatal(err)
	}
	return packed, all
}

// leavesOf reads every leaf of acme's log.
func leavesOf(t *testing.T, st *sqlite.Store) []custody.Leaf {
	t.Helper()
	n, err := st.LogSize(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	ls, err := st.Leaves(t.Context(), "acme", 0, n)
	if err != nil || uint64(len(ls)) != n {
		t.Fatalf("leaves: %d of %d, %v", len(ls), n, err)
	}
	for _, l := range ls {
		if _, err := tlog.ParseLeaf(l.Data); err != nil {
			t.Fatalf("leaf %d does not parse: %v", l.Index, err)
		}
	}
	return ls
}

// The store keeps leaves packed, and reading gives back the signed bytes:
// verify passes on the packed store. A schema 25 database, whose leaves
// are stored as signed, in a table with rowids, whose records keep
// policy versions as text and receipts with their reasons, opens as
// schema 26 with its leaves packed, reads the same leaves and records,
// and verifies.
func TestLeavesPacked(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	path := filepath.Join(dir, "c.db")
	st, key, svc, alice := serviceAt(t, dir)
	colours(t, svc, alice, "blue", "green", "red")
	if _, err := svc.Checkpoint(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	if packed, all := packedLeaves(t, st); packed != all || all < 4 {
		t.Fatalf("%d of %d leaves packed; want all", packed, all)
	}
	var stored, signed int
	if err := st.DB().QueryRowContext(ctx, `SELECT SUM(length(data)), SUM(length(custody_leaf(data))) FROM log_leaves`).Scan(&stored, &signed); err != nil {
		t.Fatal(err)
	}
	if stored*10 > signed*7 {
		t.Errorf("packed leaves take %d bytes of %d signed; want at most 70%%", stored, signed)
	}
	want := leavesOf(t, st)
	if _, err := svc.Verify(ctx, custody.VerifyOptions{}); err != nil {
		t.Fatalf("verify of the packed store: %v", err)
	}

	var blobs, rows int
	if err := st.DB().QueryRowContext(ctx, `SELECT COUNT(*) FILTER (WHERE typeof(policy_version) = 'blob' AND length(policy_version) = 32), COUNT(*) FROM records`).Scan(&blobs, &rows); err != nil || blobs != rows || rows != 3 {
		t.Fatalf("%d of %d records keep their policy version as 32 bytes, %v; want all 3", blobs, rows, err)
	}
	records := func() []*custody.Record {
		var out []*custody.Record
		err := st.View(ctx, func(tx custody.Tx) error {
			return tx.ScanRecords(ctx, "acme", func(r *custody.Record) error { out = append(out, r); return nil })
		})
		if err != nil || len(out) != 3 {
			t.Fatalf("records: %d, %v", len(out), err)
		}
		return out
	}
	wantRecords := records()
	if wantRecords[0].Receipt == nil || wantRecords[0].Receipt.Reason != "admitted by [user-channel]" || len(wantRecords[0].PolicyVersion) != 64 {
		t.Fatalf("record read back with receipt %+v, policy version %q", wantRecords[0].Receipt, wantRecords[0].PolicyVersion)
	}
	st.Close()

	// Schema 25 stored leaves as signed, policy versions as text, and
	// receipts with their reason and their overwrite, sensitive and roles
	// inputs, naming every field left out.
	rewind(t, path, toSchema29Nodes...)
	rewind(t, path, `CREATE TABLE log_leaves_25 (tenant TEXT NOT NULL, idx INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (tenant, idx))`,
		`INSERT INTO log_leaves_25 SELECT tenant, idx, custody_leaf(data) FROM log_leaves`, `DROP TABLE log_leaves`,
		`ALTER TABLE log_leaves_25 RENAME TO log_leaves`,
		`UPDATE records SET policy_version = lower(hex(policy_version)) WHERE typeof(policy_version) = 'blob'`,
		`UPDATE records SET receipt = json_set(receipt, '$.same', 'dpaltPckKAusDroSR') WHERE receipt ->> '$.same' = '*'`,
		`UPDATE records SET receipt = json_set(receipt, '$.reason', 'admitted by [' || (SELECT group_concat(value, ' ') FROM json_each(receipt, '$.rules')) || ']')
 WHERE instr(receipt ->> '$.same', 'r')`,
		`UPDATE records SET receipt = json_set(receipt, '$.inputs.overwrite', 'false') WHERE instr(receipt ->> '$.same', 'o')`,
		`UPDATE records SET receipt = json_set(receipt, '$.inputs.sensitive', 'false') WHERE instr(receipt ->> '$.same', 'S')`,
		`UPDATE records SET receipt = json_set(receipt, '$.inputs.roles', 'user') WHERE instr(receipt ->> '$.same', 'R')`,
		`UPDATE records SET receipt = json_set(receipt, '$.same', replace(replace(replace(replace(receipt ->> '$.same', 'r', ''), 'o', ''), 'S', ''), 'R', ''))
 WHERE receipt ->> '$.same' IS NOT NULL`,
		`PRAGMA user_version = 25`)
	st = reopen(t, path, 25)
	var v int
	if err := st.DB().QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil || v != sqlite.SchemaVersion {
		t.Fatalf("user_version after migration = %d, %v; want %d", v, err, sqlite.SchemaVersion)
	}
	if packed, all := packedLeaves(t, st); packed != all {
		t.Fatalf("after migrating, %d of %d leaves packed; want all", packed, all)
	}
	var withoutRowid int
	if err := st.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_schema WHERE name = 'log_leaves' AND sql LIKE '%WITHOUT ROWID%'`).Scan(&withoutRowid); err != nil || withoutRowid != 1 {
		t.Fatalf("log_leaves after migrating: without rowid %d, %v", withoutRowid, err)
	}
	same := func(when string) {
		got := leavesOf(t, st)
		for i := range want {
			if !bytes.Equal(got[i].Data, want[i].Data) {
				t.Fatalf("%s: leaf %d differs from the one read before", when, i)
			}
		}
	}
	same("migrated")
	if err := st.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM records WHERE typeof(policy_version) = 'text' AND receipt LIKE '%"reason":"admitted by%'`).Scan(&rows); err != nil || rows != 3 {
		t.Fatalf("%d records as schema 25 stored them, %v; want 3", rows, err)
	}
	if got := records(); !reflect.DeepEqual(got, wantRecords) {
		t.Fatalf("records of the migrated store read\n%+v\nwant\n%+v", got[0], wantRecords[0])
	}
	svc = serviceOver(t, st, key)
	if _, err := svc.Verify(ctx, custody.VerifyOptions{}); err != nil {
		t.Fatalf("verify of the migrated store: %v", err)
	}
	colours(t, svc, actAs(t, svc, "bob", "user"), "teal")
	if packed, all := packedLeaves(t, st); packed != all {
		t.Fatalf("after more writes, %d of %d leaves packed; want all", packed, all)
	}
	if _, err := svc.Verify(ctx, custody.VerifyOptions{}); err != nil {
		t.Fatalf("verify after more writes: %v", err)
	}
}
