package sqlite_test

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/tlog"
	"github.com/transparency-dev/merkle/proof"
)

// Proofs read their nodes as one joined value (proof_nodes.go): every
// inclusion and consistency proof of a log of 300 leaves verifies against
// the root rebuilt from the leaves, and the nodes read are those stored.
// A missing node is named; a stored value that is not a hash is returned
// as stored (read row by row), so the proof it goes into does not verify.
func TestProofNodesJoined(t *testing.T) {
	ctx := t.Context()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const size = 300
	err = s.Update(ctx, func(tx custody.Tx) error {
		for i := range size {
			if _, err := tx.AppendLeaf(ctx, "acme", fmt.Appendf(nil, "leaf %d", i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	leaves, err := s.Leaves(ctx, "acme", 0, size)
	if err != nil {
		t.Fatal(err)
	}
	mem, _, root, err := tlog.Rebuild(func(yield func(uint64, []byte) bool) {
		for _, l := range leaves {
			if !yield(l.Index, l.Data) {
				return
			}
		}
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	log := custody.LogOf(s, "acme")
	for i := range uint64(size) {
		p, err := tlog.InclusionProof(ctx, log, i, size)
		if err != nil {
			t.Fatalf("inclusion of %d: %v", i, err)
		}
		if err := tlog.VerifyInclusion(tlog.LeafHash(leaves[i].Data), i, size, p, root); err != nil {
			t.Errorf("inclusion of %d: %v", i, err)
		}
		pn, _ := proof.Inclusion(i, size)
		got, err := s.Nodes(ctx, "acme", pn.IDs)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := mem.Nodes(ctx, pn.IDs)
		for j := range want {
			if !bytes.Equal(got[j], want[j]) {
				t.Fatalf("inclusion of %d: node %d (%+v) = %x, want %x", i, j, pn.IDs[j], got[j], want[j])
			}
		}
	}
	for from := uint64(1); from < size; from += 7 {
		p, err := tlog.ConsistencyProof(ctx, log, from, size)
		if err != nil {
			t.Fatalf("consistency from %d: %v", from, err)
		}
		_, _, old, _ := tlog.Rebuild(func(yield func(uint64, []byte) bool) {
			for _, l := range leaves[:from] {
				if !yield(l.Index, l.Data) {
					return
				}
			}
		}, nil)
		if err := tlog.VerifyConsistency(from, size, p, old, root); err != nil {
			t.Errorf("consistency from %d: %v", from, err)
		}
	}

	// Leaf 5's proof starts with its sibling, leaf 4 (seq 4, level 0).
	pn, _ := proof.Inclusion(5, size)
	if pn.IDs[0].Level != 0 || pn.IDs[0].Index != 4 {
		t.Fatalf("proof of leaf 5 starts at %+v", pn.IDs[0])
	}
	// Leaf 4's append completed level 0 alone: its row's nodes are its hash.
	changed := bytes.Repeat([]byte{7}, 32)
	if _, err := s.DB().ExecContext(ctx, `UPDATE log_leaves SET nodes = ? WHERE tenant = 'acme' AND idx = 4`, changed); err != nil {
		t.Fatal(err)
	}
	got, err := s.Nodes(ctx, "acme", pn.IDs)
	if err != nil || !bytes.Equal(got[0], changed) {
		t.Fatalf("nodes with a changed hash stored = %x, %v; want it as stored", got, err)
	}
	p, err := tlog.InclusionProof(ctx, log, 5, size)
	if err == nil {
		err = tlog.VerifyInclusion(tlog.LeafHash(leaves[5].Data), 5, size, p, root)
	}
	if err == nil {
		t.Error("a proof over a changed node verifies")
	}
	// A row too short for the level asked is a missing node, whether it
	// holds nothing or 31 bytes.
	for _, nodes := range [][]byte{{}, bytes.Repeat([]byte{7}, 31)} {
		if _, err := s.DB().ExecContext(ctx, `UPDATE log_leaves SET nodes = ? WHERE tenant = 'acme' AND idx = 4`, nodes); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Nodes(ctx, "acme", pn.IDs); !errors.Is(err, tlog.ErrMissingNode) || !bytes.Contains([]byte(err.Error()), []byte("(level 0, index 4)")) {
			t.Errorf("nodes with %d bytes in the row = %v, want %v naming (level 0, index 4)", len(nodes), err, tlog.ErrMissingNode)
		}
	}
	// The other leaves' proofs need no such node and still verify.
	p, err = tlog.InclusionProof(ctx, log, 200, size)
	if err != nil {
		t.Fatal(err)
	}
	if err := tlog.VerifyInclusion(tlog.LeafHash(leaves[200].Data), 200, size, p, root); err != nil {
		t.Errorf("inclusion of 200 after the change: %v", err)
	}
}
