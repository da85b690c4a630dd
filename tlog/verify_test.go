package tlog

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"math/rand/v2"
	"testing"
)

// leafSource yields testLeaf(0..n-1) with their indexes.
func leafSource(n uint64) func(yield func(uint64, []byte) bool) {
	return func(yield func(uint64, []byte) bool) {
		for i := range n {
			if !yield(i, testLeaf(i)) {
				return
			}
		}
	}
}

func TestRebuild(t *testing.T) {
	for _, n := range []uint64{0, 1, 2, 7, 4096, 5000} {
		f := newFixture(t, n, rand.New(rand.NewPCG(n, 1)))
		var calls []uint64
		m, size, root, err := Rebuild(leafSource(n), func(done uint64) { calls = append(calls, done) })
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if got, want := size, n; got != want {
			t.Errorf("n=%d: size %d", n, got)
		}
		if !bytes.Equal(root, f.roots[n]) {
			t.Errorf("n=%d: root %x, want %x", n, root, f.roots[n])
		}
		if !maps.EqualFunc(m.nodes, f.m.nodes, bytes.Equal) {
			t.Errorf("n=%d: rebuilt nodes differ from appended nodes", n)
		}
		if len(calls) == 0 || calls[len(calls)-1] != n {
			t.Errorf("n=%d: progress calls %v do not end with %d", n, calls, n)
		}
		for i := 1; i < len(calls); i++ {
			if calls[i] <= calls[i-1] {
				t.Errorf("n=%d: progress not increasing: %v", n, calls)
			}
		}
		// The rebuilt store serves proofs.
		if n > 0 {
			p, err := InclusionProof(context.Background(), m, n/2, n)
			if err != nil {
				t.Fatal(err)
			}
			if err := VerifyInclusion(f.leaves[n/2], n/2, n, p, root); err != nil {
				t.Errorf("n=%d: %v", n, err)
			}
		}
	}
}

func TestRebuildNilProgress(t *testing.T) {
	if _, _, _, err := Rebuild(leafSource(10), nil); err != nil {
		t.Fatal(err)
	}
}

func TestRebuildOutOfOrder(t *testing.T) {
	for _, tc := range []struct {
		name    string
		indexes []uint64
	}{
		{"gap", []uint64{0, 1, 3}},
		{"repeat", []uint64{0, 1, 1}},
		{"not from zero", []uint64{1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stopped := false
			src := func(yield func(uint64, []byte) bool) {
				for _, i := range tc.indexes {
					if !yield(i, testLeaf(i)) {
						stopped = true
						return
					}
				}
			}
			_, _, _, err := Rebuild(src, nil)
			if !errors.Is(err, ErrOutOfRange) {
				t.Errorf("err = %v, want ErrOutOfRange", err)
			}
			if !stopped {
				t.Error("Rebuild did not stop the leaf source")
			}
		})
	}
}
