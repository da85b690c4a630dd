package sqlite_test

import (
	"path/filepath"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/storetest"
)

// A schema 11 database (no session_reads, no gate_refs) opens as schema 12
// with both tables, empty, and records reads at once.
func TestMigrateSessionReads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	st, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	rewind(t, path, `DROP TABLE session_reads`, `DROP TABLE gate_refs`, `PRAGMA user_version = 11`)

	st = reopen(t, path, 11)
	var v int
	if err := st.DB().QueryRowContext(t.Context(), `PRAGMA user_version`).Scan(&v); err != nil || v != sqlite.SchemaVersion {
		t.Fatalf("user_version after migration = %d, %v; want %d", v, err, sqlite.SchemaVersion)
	}
	const id = "01JREAD00000000000000000AA"
	err = st.Update(t.Context(), func(tx custody.Tx) error {
		if err := tx.RecordReads(t.Context(), "acme", "s1", []string{id}, custody.ReadGet, storetest.Start); err != nil {
			return err
		}
		return tx.InsertGateRefs(t.Context(), []custody.GateRef{{Tenant: "acme", Record: id, LogIndex: 3, How: custody.GateCited, At: storetest.Start}})
	})
	if err != nil {
		t.Fatalf("recording into the migrated tables: %v", err)
	}
	err = st.View(t.Context(), func(tx custody.Tx) error {
		reads, err := tx.ReadsOf(t.Context(), "acme", []string{id}, storetest.Start)
		if err != nil || len(reads) != 1 {
			t.Errorf("ReadsOf after migration: %+v, %v", reads, err)
		}
		refs, err := tx.GateRefsOf(t.Context(), "acme", []string{id})
		if err != nil || len(refs) != 1 {
			t.Errorf("GateRefsOf after migration: %+v, %v", refs, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
