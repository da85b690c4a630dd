package custody_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
)

// workload leaves a store with admitted, quarantined, confirmed, derived and
// suspended records and a checkpoint.
func workload(t *testing.T, e *env) (ids []string) {
	l := &lineageEnv{env: e}
	alice := e.principal("acme", "alice", []string{"user"}, nil, nil)
	h := e.principal("acme", "harness", []string{"agent"}, []string{"agent", "tool:email", "derive"}, nil)
	rev := e.principal("acme", "rev", []string{"reviewer"}, nil, nil)
	l.alice, l.harness, l.rev = e.act(alice, ""), e.act(h, "alice"), e.act(rev, "")
	a := e.remember(l.alice, custody.Candidate{Namespace: "n", Key: "payee_account", Class: "fact", Body: "ACCT-1042", Channel: "user"})
	q := e.remember(l.harness, custody.Candidate{Namespace: "n", Key: "payee_account", Class: "fact", Body: "ACCT-7777", Channel: "tool:email"})
	ep := e.remember(l.harness, custody.Candidate{Namespace: "n", Class: "episode", Body: "newsletter", Channel: "tool:email"})
	s := e.remember(l.harness, custody.Candidate{Namespace: "n", Class: "episode", Body: "digest", Channel: "derive", DerivedFrom: []custody.Edge{{ID: ep.ID, Weight: 1}}})
	if _, err := e.svc.Quarantine(e.ctx, l.rev, ep.ID, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Checkpoint(e.ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	return []string{a.ID, q.ID, ep.ID, s.ID}
}

func TestVerifyDetectsTampering(t *testing.T) {
	for _, tc := range []struct {
		name string
		sql  string
		want string
	}{
		{"body byte", `UPDATE records SET body = 'ACCT-1043' WHERE body = 'ACCT-1042'`, "body"},
		{"state", `UPDATE records SET state = 'admitted' WHERE state = 'quarantined'`, "state"},
		{"owner", `UPDATE records SET owner = 'bob' WHERE body = 'ACCT-1042'`, "owner"},
		{"audience", `UPDATE records SET audience = 'tenant' WHERE body = 'ACCT-1042'`, "audience"},
		{"authority", `UPDATE records SET authority = 4 WHERE body = 'ACCT-7777'`, "authority"},
		// SQLite stores leaves packed (custody_leaf reads one, custody_pack_leaf
		// packs it again): the edits below change the signed bytes.
		{"log entry", `UPDATE log_leaves SET data = custody_pack_leaf(CAST(REPLACE(CAST(custody_leaf(data) AS TEXT), 'quarantined', 'admittedxxx') AS BLOB)) WHERE idx = 4`, "log"},
		{"signature", `UPDATE log_leaves SET data = custody_pack_leaf(CAST(substr(custody_leaf(data), 1, length(custody_leaf(data)) - 1) || CASE WHEN substr(custody_leaf(data), -1) = x'00' THEN x'01' ELSE x'00' END AS BLOB)) WHERE idx = 5`, "signature"},
		{"packed leaf damaged", `UPDATE log_leaves SET data = substr(data, 1, length(data) - 4) WHERE idx = 4`, "log"},
		{"packed leaf byte", `UPDATE log_leaves SET data = substr(data, 1, 20) || CASE WHEN substr(data, 21, 1) = x'00' THEN x'01' ELSE x'00' END || substr(data, 22) WHERE idx = 4`, "log"},
		{"newest-version flag", `UPDATE records SET head = 0 WHERE body = 'ACCT-1042'`, "newest-version flag"},
		{"deleted record", `DELETE FROM records WHERE body = 'digest'`, "deleted"},
		{"deleted lineage edge", `DELETE FROM edges`, "lineage edges"},
		{"redirected lineage edge", `UPDATE edges SET child_rid = (SELECT rid FROM records WHERE body = 'ACCT-1042')`, "lineage edges"},
		{"lineage edge to another child", `UPDATE edges SET child = (SELECT id FROM records WHERE body = 'ACCT-1042'),
 child_rid = (SELECT rid FROM records WHERE body = 'ACCT-1042')`, "lineage edges"},
		{"added lineage edge", `INSERT INTO edges (tenant, parent, child, weight, child_rid)
 SELECT tenant, parent, (SELECT id FROM records WHERE body = 'ACCT-1042'), weight, (SELECT rid FROM records WHERE body = 'ACCT-1042') FROM edges`, "lineage edges"},
		{"lineage edge weight", `UPDATE edges SET weight = 0.1`, "lineage edges"},
		{"trigram row deleted", `DELETE FROM records_tri WHERE rowid = (SELECT rid FROM records WHERE body = 'ACCT-7777')`, "no row in the gate's trigram index"},
		{"trigram row replaced", `DELETE FROM records_tri WHERE rowid = (SELECT rid FROM records WHERE body = 'ACCT-7777');
 INSERT INTO records_tri (rowid, norm) VALUES ((SELECT rid FROM records WHERE body = 'ACCT-7777'), 'acct')`, "holds 2 trigrams"},
		{"trigram row added", `INSERT INTO records_tri (rowid, norm) VALUES (999999, 'acct7777')`, "no live record is there"},
		{"search row deleted", `DELETE FROM records_fts WHERE rowid = (SELECT rid FROM records WHERE body = 'ACCT-1042')`, "no row in the search index"},
		{"deleted leaf", `DELETE FROM log_leaves WHERE idx = 3`, "leaf"},
		{"reordered leaves", `UPDATE log_leaves SET idx = CASE idx WHEN 4 THEN 5 WHEN 5 THEN 4 END WHERE idx IN (4, 5)`, ""},
		{"tree node", `UPDATE log_leaves SET nodes = CAST(substr(nodes, 1, 32) || zeroblob(32) || substr(nodes, 65) AS BLOB) WHERE idx = 1 AND length(nodes) = 64`, "tree node"},
		{"public key", `UPDATE principals SET public_key = zeroblob(32) WHERE name = 'alice'`, "public key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, custody.Options{})
			workload(t, e)
			if err := e.store.Tidy(e.ctx); err != nil { // the gate's trigrams move from pending into their index
				t.Fatal(err)
			}
			if _, err := e.svc.Verify(e.ctx, custody.VerifyOptions{}); err != nil {
				t.Fatalf("clean store: %v", err)
			}
			var packed int
			if err := e.store.DB().QueryRow(`SELECT COUNT(*) FROM log_leaves WHERE idx IN (4, 5) AND substr(data, 1, 2) = x'0001'`).Scan(&packed); err != nil || packed != 2 {
				t.Fatalf("leaves 4 and 5: %d packed, %v; want both, as the edits expect", packed, err)
			}
			if tc.name == "reordered leaves" {
				// Swap two rows through a free index.
				for _, q := range []string{`UPDATE log_leaves SET idx = -1 WHERE idx = 4`, `UPDATE log_leaves SET idx = 4 WHERE idx = 5`, `UPDATE log_leaves SET idx = 5 WHERE idx = -1`} {
					if _, err := e.store.DB().Exec(q); err != nil {
						t.Fatal(err)
					}
				}
			} else if _, err := e.store.DB().Exec(tc.sql); err != nil {
				t.Fatal(err)
			}
			_, err := e.svc.Verify(e.ctx, custody.VerifyOptions{})
			var d *custody.Difference
			if !errors.As(err, &d) {
				t.Fatalf("verify after tampering: err = %v, want a difference", err)
			}
			if !strings.Contains(d.What, tc.want) {
				t.Errorf("difference %q does not name %q", d.What, tc.want)
			}
		})
	}
}

// A database rolled back to an older copy fails against a checkpoint kept
// outside it.
func TestVerifyDetectsRollback(t *testing.T) {
	e := newEnv(t, custody.Options{})
	workload(t, e)
	dir := t.TempDir()
	old := filepath.Join(dir, "old.db")
	if _, err := e.store.DB().Exec(`VACUUM INTO ?`, old); err != nil {
		t.Fatal(err)
	}
	alice := e.act(e.principal("acme", "zed", []string{"user"}, nil, nil), "")
	e.remember(alice, custody.Candidate{Namespace: "n", Class: "fact", Body: "later", Channel: "user"})
	cp, err := e.svc.Checkpoint(e.ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Verify(e.ctx, custody.VerifyOptions{Checkpoints: [][]byte{cp}}); err != nil {
		t.Fatalf("current store against its checkpoint: %v", err)
	}
	// Put the old copy in place of the store.
	dbPath := e.store.Path()
	e.store.Close()
	copyFile(t, old, dbPath)
	os.Remove(dbPath + "-wal")
	os.Remove(dbPath + "-shm")
	e2 := reopen(t, e, dbPath)
	_, err = e2.svc.Verify(e.ctx, custody.VerifyOptions{Checkpoints: [][]byte{cp}})
	var d *custody.Difference
	if !errors.As(err, &d) || !strings.Contains(d.What, "rolled back") {
		t.Fatalf("rolled-back store: %v", err)
	}
}

func copyFile(t *testing.T, from, to string) {
	if err := copyOneFile(from, to); err != nil {
		t.Fatal(err)
	}
}
