package storetest

import (
	"fmt"
	"testing"

	"github.com/custody-mem/custody/tlog"
)

// Two tenants' logs of more than 256 entries (so that proofs pass nodes
// the service keeps, proof_nodes.go), written in turns so that their trees
// have nodes at the same places: every inclusion proof of each verifies
// against its own root, the first time (nodes from the store) and again
// (upper nodes kept), proofs of the two tenants in turns; and consistency
// proofs alike.
func testProofsKeptNodes(t *testing.T, e *env) {
	a, b := e.user("acme", "alice"), e.user("beta", "bob")
	for i := range 300 {
		e.fact(a, "n", fmt.Sprintf("alpha note %d", i))
		e.fact(b, "n", fmt.Sprintf("beta note %d", i))
	}
	type tree struct {
		tenant string
		size   uint64
		leaves [][]byte
		root   func(n uint64) []byte
	}
	var trees []tree
	for _, tenant := range []string{"acme", "beta"} {
		size, err := e.store.LogSize(e.ctx, tenant)
		if err != nil || size < 300 {
			t.Fatalf("%s: log size %d, %v", tenant, size, err)
		}
		ls, err := e.store.Leaves(e.ctx, tenant, 0, size)
		if err != nil {
			t.Fatal(err)
		}
		var leaves [][]byte
		for _, l := range ls {
			leaves = append(leaves, l.Data)
		}
		root := func(n uint64) []byte {
			_, _, r, err := tlog.Rebuild(func(yield func(uint64, []byte) bool) {
				for i, l := range leaves[:n] {
					if !yield(uint64(i), l) {
						return
					}
				}
			}, nil)
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		trees = append(trees, tree{tenant, size, leaves, root})
	}
	roots := [][]byte{trees[0].root(trees[0].size), trees[1].root(trees[1].size)}
	for round := range 2 {
		for i := uint64(0); i < trees[0].size && i < trees[1].size; i += 5 {
			for k, tr := range trees {
				p, err := e.svc.InclusionProof(e.ctx, tr.tenant, i, tr.size)
				if err != nil {
					t.Fatalf("round %d: %s: inclusion of %d: %v", round, tr.tenant, i, err)
				}
				if err := tlog.VerifyInclusion(tlog.LeafHash(tr.leaves[i]), i, tr.size, p, roots[k]); err != nil {
					t.Fatalf("round %d: %s: inclusion of %d: %v", round, tr.tenant, i, err)
				}
			}
		}
		for from := uint64(1); from < 300; from += 41 {
			for k, tr := range trees {
				p, err := e.svc.ConsistencyProof(e.ctx, tr.tenant, from, tr.size)
				if err != nil {
					t.Fatalf("round %d: %s: consistency from %d: %v", round, tr.tenant, from, err)
				}
				if err := tlog.VerifyConsistency(from, tr.size, p, tr.root(from), roots[k]); err != nil {
					t.Errorf("round %d: %s: consistency from %d: %v", round, tr.tenant, from, err)
				}
			}
		}
	}
}
