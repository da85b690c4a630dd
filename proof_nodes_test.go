package custody_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/tlog"
)

// Proofs keep the upper nodes of a tenant's tree (proof_nodes.go): every
// inclusion and consistency proof verifies, read first from the store and
// then with the kept nodes; a kept node is not read again (a service that
// has it still proves a leaf whose path needs it after the store lost it,
// where a new service over the same store cannot); a lower node is read
// from the store on every proof (a changed one shows in the next proof).
func TestProofsKeepUpperNodes(t *testing.T) {
	e, _, size := notedLog(t, 600)
	leaves, err := e.store.Leaves(e.ctx, "acme", 0, size)
	if err != nil {
		t.Fatal(err)
	}
	rootOf := func(n uint64) []byte {
		_, _, root, err := tlog.Rebuild(func(yield func(uint64, []byte) bool) {
			for _, l := range leaves[:n] {
				if !yield(l.Index, l.Data) {
					return
				}
			}
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return root
	}
	root := rootOf(size)
	prove := func(svc *custody.Service, i uint64) error {
		p, err := svc.InclusionProof(e.ctx, "acme", i, size)
		if err != nil {
			return err
		}
		return tlog.VerifyInclusion(tlog.LeafHash(leaves[i].Data), i, size, p, root)
	}
	for round := range 2 {
		for i := uint64(0); i < size; i += 3 {
			if err := prove(e.svc, i); err != nil {
				t.Fatalf("round %d: inclusion of %d: %v", round, i, err)
			}
		}
		for from := uint64(1); from < size; from += 37 {
			p, err := e.svc.ConsistencyProof(e.ctx, "acme", from, size)
			if err != nil {
				t.Fatalf("round %d: consistency from %d: %v", round, from, err)
			}
			if err := tlog.VerifyConsistency(from, size, p, rootOf(from), root); err != nil {
				t.Errorf("round %d: consistency from %d: %v", round, from, err)
			}
		}
	}

	// Leaf 300's path passes the root of leaves 0-255: level 8, index 0,
	// kept in leaf 255's row (levels 0 to 8, the last 32 bytes of nine
	// hashes), which is cut before it.
	if _, err := e.store.DB().ExecContext(e.ctx, `UPDATE log_leaves SET nodes = substr(nodes, 1, 8 * 32) WHERE tenant = 'acme' AND idx = 255 AND length(nodes) = 9 * 32`); err != nil {
		t.Fatal(err)
	}
	if err := prove(e.svc, 300); err != nil {
		t.Errorf("inclusion of 300 with the kept node: %v", err)
	}
	fresh := reopen(t, e, e.store.Path())
	if err := prove(fresh.svc, 300); err == nil {
		t.Error("a new service proved leaf 300 without the node of leaves 0-255")
	}
	// Its sibling, leaf 301 (level 0), is read from the store each time.
	if _, err := e.store.DB().ExecContext(e.ctx, `UPDATE log_leaves SET nodes = CAST(? || substr(nodes, 33) AS BLOB) WHERE tenant = 'acme' AND idx = 301`, bytes.Repeat([]byte{7}, 32)); err != nil {
		t.Fatal(err)
	}
	if err := prove(e.svc, 300); err == nil {
		t.Error("the proof of leaf 300 verifies over a changed sibling")
	}
	if err := prove(e.svc, 100); err != nil {
		t.Errorf("inclusion of 100, which needs neither node: %v", err)
	}
}

// A service keeps the largest size of a log it has read (proof_nodes.go):
// a proof of a tree no larger reads no size. The store's size is made to
// fall behind what the service saw (its newest leaf row deleted, which the
// log never does): the service still asks for the tree it saw, and finds
// the deleted row's node missing (the row held the nodes its append
// completed), where a new service over the same store refuses the tree as
// out of range. With the row put back, a tree past every size seen is
// read for, and refused while the log is smaller; once the log has grown,
// the larger tree is proved.
func TestProofsKeepTheLogSize(t *testing.T) {
	e, alice, size := notedLog(t, 40)
	if _, err := e.svc.InclusionProof(e.ctx, "acme", 0, size); err != nil {
		t.Fatalf("inclusion of 0 in %d: %v", size, err)
	}
	if _, err := e.svc.InclusionProof(e.ctx, "acme", 0, size+1); !errors.Is(err, custody.ErrInvalid) {
		t.Fatalf("inclusion of 0 in %d, past the log: err = %v, want ErrInvalid", size+1, err)
	}
	if _, err := e.svc.InclusionProof(e.ctx, "acme", size-1, size-1); !errors.Is(err, custody.ErrInvalid) {
		t.Fatalf("inclusion of %d in a tree of %d: err = %v, want ErrInvalid", size-1, size-1, err)
	}
	var last, lastNodes []byte
	if err := e.store.DB().QueryRowContext(e.ctx, `DELETE FROM log_leaves WHERE tenant = 'acme' AND idx = ? RETURNING data, nodes`, size-1).Scan(&last, &lastNodes); err != nil {
		t.Fatal(err)
	}
	if got, err := e.store.LogSize(e.ctx, "acme"); err != nil || got != size-1 {
		t.Fatalf("log size after the delete: %d, %v; want %d", got, err, size-1)
	}
	if _, err := e.svc.InclusionProof(e.ctx, "acme", 0, size); !errors.Is(err, tlog.ErrMissingNode) {
		t.Errorf("the service that saw %d leaves: inclusion of 0 in %d: err = %v, want the deleted row's node missing", size, size, err)
	}
	if _, err := e.svc.ConsistencyProof(e.ctx, "acme", 1, size); !errors.Is(err, tlog.ErrMissingNode) {
		t.Errorf("the service that saw %d leaves: consistency of 1 and %d: err = %v, want the deleted row's node missing", size, size, err)
	}
	fresh := reopen(t, e, e.store.Path())
	if _, err := fresh.svc.InclusionProof(e.ctx, "acme", 0, size); !errors.Is(err, custody.ErrInvalid) {
		t.Errorf("a new service: inclusion of 0 in %d: err = %v, want ErrInvalid", size, err)
	}
	if _, err := e.store.DB().ExecContext(e.ctx, `INSERT INTO log_leaves (tenant, idx, data, nodes) VALUES ('acme', ?, ?, ?)`, size-1, last, lastNodes); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.InclusionProof(e.ctx, "acme", 0, size); err != nil {
		t.Errorf("inclusion of 0 in %d with the row put back: %v", size, err)
	}
	for i := range 3 {
		e.remember(alice, custody.Candidate{Namespace: "n", Class: custody.ClassFact, Body: fmt.Sprintf("later note %d", i), Channel: "user"})
	}
	grown, err := e.store.LogSize(e.ctx, "acme")
	if err != nil || grown <= size {
		t.Fatalf("log size after more writes: %d, %v", grown, err)
	}
	if _, err := e.svc.InclusionProof(e.ctx, "acme", grown-1, grown); err != nil {
		t.Errorf("inclusion of %d in the grown log of %d: %v", grown-1, grown, err)
	}
}

// notedLog is a new service whose user alice has written n notes, and
// the size of acme's log after them.
func notedLog(t *testing.T, n int) (*env, *custody.Caller, uint64) {
	t.Helper()
	e := newEnv(t, custody.Options{})
	e.principal("acme", "alice", []string{"user"}, nil, nil)
	alice := e.act(mustPrincipal(t, e, "acme", "alice"), "")
	for i := range n {
		e.remember(alice, custody.Candidate{Namespace: "n", Class: custody.ClassFact, Body: fmt.Sprintf("note %d", i), Channel: "user"})
	}
	size, err := e.store.LogSize(e.ctx, "acme")
	if err != nil || size < uint64(n) {
		t.Fatalf("log size %d, %v", size, err)
	}
	return e, alice, size
}
