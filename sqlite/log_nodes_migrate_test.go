package sqlite_test

import (
	"database/sql"
	"fmt"
	"math/bits"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/tlog"
)

// A schema 29 database, with its tree nodes in log_nodes, opens at schema
// 30 with every node in its leaf's row and log_nodes gone: the same nodes
// with the same hashes, verify passing, every leaf's inclusion proved
// against the root signed before, and later writes appending to the same
// tree. Its twin: a schema 29 database one of whose nodes was deleted
// keeps the gap as a node that differs, which verify names.
func TestMigrateNodesIntoLeavesToSchema30(t *testing.T) {
	for _, gap := range []bool{false, true} {
		t.Run(fmt.Sprintf("gap=%v", gap), func(t *testing.T) {
			ctx := t.Context()
			dir := t.TempDir()
			path := filepath.Join(dir, "c.db")
			st, key, svc, alice := serviceAt(t, dir)
			p := alice.Principal
			for i := range 37 {
				derive(t, svc, alice, fmt.Sprintf("note %d", i))
			}
			size, err := st.LogSize(ctx, "acme")
			if err != nil {
				t.Fatal(err)
			}
			leaves := checkStoredRoot(t, st, "acme", size) // log_test.go
			root, err := tlog.RootHash(ctx, custody.LogOf(st, "acme"), size)
			if err != nil {
				t.Fatal(err)
			}
			before := storedNodes(t, st.DB(), `SELECT seq, level, hash FROM (`+nodesOfLeaves+`)`)
			st.Close()
			rewind(t, path, append(slices.Clone(toSchema29Nodes), `PRAGMA user_version = 29`)...)
			if gap { // leaf 7's append completed levels 0 to 3
				rewind(t, path, `DELETE FROM log_nodes WHERE tenant = 'acme' AND seq = 7 AND level = 1`)
			}

			st = reopen(t, path, 29)
			var v, tables, cols int
			if err := st.DB().QueryRowContext(ctx, `SELECT (SELECT user_version FROM pragma_user_version),
 (SELECT COUNT(*) FROM sqlite_schema WHERE name = 'log_nodes'),
 (SELECT COUNT(*) FROM pragma_table_info('log_leaves') WHERE name = 'nodes')`).Scan(&v, &tables, &cols); err != nil {
				t.Fatal(err)
			}
			if v != 30 || tables != 0 || cols != 1 {
				t.Fatalf("after migration: user_version %d (want 30), log_nodes %d (want gone), log_leaves.nodes %d (want 1)", v, tables, cols)
			}
			after := storedNodes(t, st.DB(), `SELECT seq, level, hash FROM (`+nodesOfLeaves+`)`)
			svc = serviceOver(t, st, key)
			_, verr := svc.Verify(ctx, custody.VerifyOptions{})
			if gap {
				if verr == nil || !strings.Contains(verr.Error(), "tree node") {
					t.Fatalf("verify of a store whose node 7/1 was deleted before the migration: %v, want a tree node named", verr)
				}
				return
			}
			// A tree of n leaves has 2n − popcount(n) complete nodes.
			if len(before) != 2*int(size)-bits.OnesCount64(size) || !slices.Equal(after, before) {
				t.Fatalf("tree nodes after migration:\n%v\nwant the %d before it:\n%v", after, len(before), before)
			}
			if verr != nil {
				t.Fatalf("verify after migration: %v", verr)
			}
			for i := range size {
				proof, err := svc.InclusionProof(ctx, "acme", i, size)
				if err == nil {
					err = tlog.VerifyInclusion(tlog.LeafHash(leaves[i].Data), i, size, proof, root)
				}
				if err != nil {
					t.Errorf("inclusion of %d in the tree of %d signed before the migration: %v", i, size, err)
				}
			}
			alice, _ = svc.Act(ctx, p, "")
			for i := range 5 {
				derive(t, svc, alice, fmt.Sprintf("later note %d", i))
			}
			if _, err := svc.Verify(ctx, custody.VerifyOptions{}); err != nil {
				t.Fatalf("verify after writes at schema 30: %v", err)
			}
			grown, _ := st.LogSize(ctx, "acme")
			if _, err := svc.ConsistencyProof(ctx, "acme", size, grown); err != nil {
				t.Errorf("consistency of %d and %d: %v", size, grown, err)
			}
		})
	}
}

// storedNodes reads rows of two numbers and a hash (a node's seq and
// level, or its level and index) as sorted strings.
func storedNodes(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var a, b int
		var h []byte
		if err := rows.Scan(&a, &b, &h); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%d/%d=%x", a, b, h))
	}
	slices.Sort(out)
	return out
}
