package tlog

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"math/bits"
	"sync"
	"testing"

	"github.com/transparency-dev/merkle/compact"
)

func hd(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

// refRoot is the RFC 6962 Merkle Tree Hash written straight from the RFC's
// recursive definition (section 2.1), independent of merkle/compact.
func refRoot(leafHashes [][]byte) []byte {
	switch n := len(leafHashes); n {
	case 0:
		return EmptyRoot()
	case 1:
		return leafHashes[0]
	default:
		k := 1 << (bits.Len(uint(n-1)) - 1) // largest power of two < n
		return hashChildren(refRoot(leafHashes[:k]), refRoot(leafHashes[k:]))
	}
}

// testLeaf returns a deterministic, distinct leaf for index i.
func testLeaf(i uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte("leaf-"), i)
}

// appendAll appends leaves one by one with Append and checks each returned
// root against want (if not nil), returning the store.
func appendAll(t testing.TB, leafHashes [][]byte, want func(size uint64) []byte) *MemNodes {
	t.Helper()
	ctx := context.Background()
	m := NewMemNodes()
	for i, h := range leafHashes {
		nodes, root, err := Append(ctx, m, uint64(i), h)
		if err != nil {
			t.Fatalf("Append(size %d): %v", i, err)
		}
		m.Put(nodes)
		if want != nil {
			if got, w := hex.EncodeToString(root), hex.EncodeToString(want(uint64(i+1))); got != w {
				t.Fatalf("Append(size %d) root = %s, want %s", i, got, w)
			}
		}
	}
	return m
}

// countingReader records the calls made to a NodeReader.
type countingReader struct {
	r     NodeReader
	mu    sync.Mutex
	calls int
	ids   int
}

func (c *countingReader) Nodes(ctx context.Context, ids []compact.NodeID) ([][]byte, error) {
	c.mu.Lock()
	c.calls++
	c.ids += len(ids)
	c.mu.Unlock()
	return c.r.Nodes(ctx, ids)
}

// funcReader adapts a function to NodeReader, for fault injection.
type funcReader func(ctx context.Context, ids []compact.NodeID) ([][]byte, error)

func (f funcReader) Nodes(ctx context.Context, ids []compact.NodeID) ([][]byte, error) {
	return f(ctx, ids)
}
