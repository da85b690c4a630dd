package tlog

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"testing"

	"github.com/transparency-dev/merkle/compact"
)

// fakeNodes answers any id with a hash derived from the id, so that proofs
// over huge trees can be requested without building them.
var fakeNodes = funcReader(func(_ context.Context, ids []compact.NodeID) ([][]byte, error) {
	out := make([][]byte, len(ids))
	for i, id := range ids {
		var b [16]byte
		binary.BigEndian.PutUint64(b[:8], uint64(id.Level))
		binary.BigEndian.PutUint64(b[8:], id.Index)
		sum := sha256.Sum256(b[:])
		out[i] = sum[:]
	}
	return out, nil
})

func TestAppendNodes(t *testing.T) {
	ctx := context.Background()
	leaf := LeafHash([]byte("x"))
	for _, size := range []uint64{0, 1, 2, 3, 6, 7, 8, 255, 1<<20 - 1, 1 << 40, 1<<63 - 1} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			cr := &countingReader{r: fakeNodes}
			nodes, root, err := Append(ctx, cr, size, leaf)
			if err != nil {
				t.Fatal(err)
			}
			wantReads := bits.OnesCount64(size)
			if got, want := cr.ids, wantReads; got != want {
				t.Errorf("read %d nodes, want %d", got, want)
			}
			if got, want := cr.calls, min(wantReads, 1); got != want {
				t.Errorf("made %d Nodes calls, want %d", got, want)
			}
			// The new leaf, then one parent per trailing one bit of size.
			if got, want := len(nodes), 1+bits.TrailingZeros64(^size); got != want {
				t.Fatalf("got %d nodes, want %d", got, want)
			}
			for level, n := range nodes {
				if got, want := n.ID, compact.NewNodeID(uint(level), size>>level); got != want {
					t.Errorf("node %d: id %+v, want %+v", level, got, want)
				}
			}
			if !bytes.Equal(nodes[0].Hash, leaf) {
				t.Errorf("first node is not the leaf hash")
			}
			if len(root) != HashSize {
				t.Errorf("root is %d bytes", len(root))
			}
			// AppendNodes gives the same nodes, without the root.
			same, err := AppendNodes(ctx, fakeNodes, size, leaf)
			if err != nil || len(same) != len(nodes) {
				t.Fatalf("AppendNodes: %d nodes, %v; Append gave %d", len(same), err, len(nodes))
			}
			for i := range same {
				if same[i].ID != nodes[i].ID || !bytes.Equal(same[i].Hash, nodes[i].Hash) {
					t.Errorf("AppendNodes node %d = %+v, Append's %+v", i, same[i], nodes[i])
				}
			}
		})
	}
}

func TestAppendManyEmpty(t *testing.T) {
	ctx := context.Background()
	m := katStore(t)
	for size := range uint64(9) {
		nodes, root, err := AppendMany(ctx, m, size, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := len(nodes), 0; got != want {
			t.Errorf("size %d: %d nodes, want %d", size, got, want)
		}
		if got, want := fmt.Sprintf("%x", root), katRoots[size]; got != want {
			t.Errorf("size %d: root %s, want %s", size, got, want)
		}
	}
}

func TestProofReadsAreLogarithmic(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ a, b uint64 }{
		{0, 1}, {5, 8}, {1000, 1001}, {123456, 1 << 20}, {1<<40 - 3, 1<<40 + 12345}, {1, 1<<63 + 5},
	} {
		t.Run(fmt.Sprintf("%d-%d", tc.a, tc.b), func(t *testing.T) {
			bound := 2*bits.Len64(tc.b) + 2
			cr := &countingReader{r: fakeNodes}
			p, err := InclusionProof(ctx, cr, tc.a, tc.b)
			if err != nil {
				t.Fatal(err)
			}
			if cr.calls > 1 || cr.ids > bound || len(p) > bits.Len64(tc.b) {
				t.Errorf("inclusion: %d calls, %d ids, proof length %d", cr.calls, cr.ids, len(p))
			}
			cr = &countingReader{r: fakeNodes}
			p, err = ConsistencyProof(ctx, cr, tc.a, tc.b)
			if err != nil {
				t.Fatal(err)
			}
			if cr.calls > 1 || cr.ids > bound || len(p) > bits.Len64(tc.b)+1 {
				t.Errorf("consistency: %d calls, %d ids, proof length %d", cr.calls, cr.ids, len(p))
			}
		})
	}
}

func TestTreeErrors(t *testing.T) {
	ctx := context.Background()
	m := katStore(t)
	short := funcReader(func(_ context.Context, ids []compact.NodeID) ([][]byte, error) {
		return make([][]byte, len(ids)-1), nil
	})
	truncated := funcReader(func(_ context.Context, ids []compact.NodeID) ([][]byte, error) {
		return make([][]byte, len(ids)), nil // all nil hashes
	})
	good := LeafHash(nil)
	for _, tc := range []struct {
		name string
		call func() error
		want error
	}{
		{"inclusion index == size", func() error { _, err := InclusionProof(ctx, m, 8, 8); return err }, ErrOutOfRange},
		{"inclusion empty tree", func() error { _, err := InclusionProof(ctx, m, 0, 0); return err }, ErrOutOfRange},
		{"consistency from > to", func() error { _, err := ConsistencyProof(ctx, m, 5, 4); return err }, ErrOutOfRange},
		{"inclusion beyond stored", func() error { _, err := InclusionProof(ctx, m, 0, 9); return err }, ErrMissingNode},
		{"consistency beyond stored", func() error { _, err := ConsistencyProof(ctx, m, 3, 12); return err }, ErrMissingNode},
		{"root beyond stored", func() error { _, err := RootHash(ctx, m, 9); return err }, ErrMissingNode},
		{"append at wrong size", func() error { _, _, err := Append(ctx, m, 10, good); return err }, ErrMissingNode},
		{"append short hash", func() error { _, _, err := Append(ctx, m, 8, good[:31]); return err }, ErrBadHash},
		{"append many with a bad hash", func() error {
			_, _, err := AppendMany(ctx, m, 8, [][]byte{good, nil})
			return err
		}, ErrBadHash},
		{"reader returns too few", func() error { _, err := InclusionProof(ctx, short, 3, 8); return err }, ErrMissingNode},
		{"reader returns bad hashes", func() error { _, err := RootHash(ctx, truncated, 7); return err }, ErrBadHash},
		{"verify inclusion index == size", func() error { return VerifyInclusion(good, 3, 3, nil, good) }, ErrOutOfRange},
		{"verify consistency from > to", func() error { return VerifyConsistency(3, 2, nil, good, good) }, ErrOutOfRange},
		{"verify inclusion wrong root", func() error { return VerifyInclusion(good, 0, 1, nil, EmptyRoot()) }, ErrInvalidProof},
		{"verify consistency equal sizes different roots", func() error {
			return VerifyConsistency(4, 4, nil, good, EmptyRoot())
		}, ErrInvalidProof},
		{"verify consistency from empty with non-empty root", func() error {
			return VerifyConsistency(0, 4, nil, good, good)
		}, ErrInvalidProof},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(); !errors.Is(err, tc.want) {
				t.Errorf("got error %v, want %v", err, tc.want)
			}
		})
	}
}

func TestVerifyConsistencyFromEmpty(t *testing.T) {
	if err := VerifyConsistency(0, 8, nil, EmptyRoot(), hd(t, katRoots[8])); err != nil {
		t.Errorf("empty tree should be consistent with any tree: %v", err)
	}
	if err := VerifyConsistency(0, 0, nil, EmptyRoot(), EmptyRoot()); err != nil {
		t.Errorf("empty tree should be consistent with itself: %v", err)
	}
}

func TestMemNodesCopies(t *testing.T) {
	m := NewMemNodes()
	h := LeafHash([]byte("a"))
	id := compact.NewNodeID(0, 0)
	m.Put([]Node{{ID: id, Hash: h}})
	h[0] ^= 1
	got, err := m.Nodes(context.Background(), []compact.NodeID{id})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(got[0], h) {
		t.Fatal("Put kept the caller's slice")
	}
	got[0][0] ^= 1
	again, _ := m.Nodes(context.Background(), []compact.NodeID{id})
	if bytes.Equal(again[0], got[0]) {
		t.Fatal("Nodes returned the stored slice")
	}
}

// A border kept in memory gives, append after append, the nodes
// AppendNodes gives reading the store, and reads nothing itself.
func TestBorderIsAppendNodes(t *testing.T) {
	ctx := context.Background()
	m := NewMemNodes()
	b, err := ReadBorder(ctx, m, 0)
	if err != nil {
		t.Fatal(err)
	}
	for size := range uint64(300) {
		if b.Size() != size {
			t.Fatalf("border size %d, want %d", b.Size(), size)
		}
		leaf := LeafHash(testLeaf(size))
		want, err := AppendNodes(ctx, m, size, leaf)
		if err != nil {
			t.Fatal(err)
		}
		got, err := b.Append(leaf)
		if err != nil || len(got) != len(want) {
			t.Fatalf("size %d: Border.Append gave %d nodes, %v; AppendNodes %d", size, len(got), err, len(want))
		}
		for i := range got {
			if got[i].ID != want[i].ID || !bytes.Equal(got[i].Hash, want[i].Hash) {
				t.Fatalf("size %d: node %d = %+v, AppendNodes' %+v", size, i, got[i], want[i])
			}
		}
		m.Put(want)
	}
	// A border read from the store at a size goes on as the one kept.
	read, err := ReadBorder(ctx, m, 300)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := read.Append(LeafHash(testLeaf(300)))
	c, _ := b.Append(LeafHash(testLeaf(300)))
	if len(a) != len(c) || !bytes.Equal(a[len(a)-1].Hash, c[len(c)-1].Hash) {
		t.Errorf("a border read at 300 appends %+v, the one kept %+v", a, c)
	}
	if _, err := b.Append([]byte("short")); !errors.Is(err, ErrBadHash) {
		t.Errorf("appending a short hash: %v, want ErrBadHash", err)
	}
}
