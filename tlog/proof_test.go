package tlog

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/transparency-dev/merkle/testonly"
)

// longTests enables the slow tree tests. The flag goes after the package:
//
//	go test ./tlog/ -run Proofs -tlog.long
var longTests = flag.Bool("tlog.long", false, "also check every tree size below 65,536 and 100x more random proofs (about 30 s)")

// fixture is a tree built by Append/AppendMany, with the leaf hashes and
// the root of every prefix computed independently of the code under test.
type fixture struct {
	m      *MemNodes
	leaves [][]byte // leaf hashes
	roots  [][]byte // roots[n] = root of the first n leaves
}

// newFixture builds a tree of n leaves with AppendMany in random batches.
// Reference roots come from a separate compact.Range fed one leaf at a time
// (and, for small trees, from the RFC's recursive definition).
func newFixture(t testing.TB, n uint64, rng *rand.Rand) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{m: NewMemNodes(), leaves: make([][]byte, n), roots: make([][]byte, n+1)}
	rf := &compact.RangeFactory{Hash: rfc6962.DefaultHasher.HashChildren}
	ref := rf.NewEmptyRange(0)
	f.roots[0] = rfc6962.DefaultHasher.EmptyRoot()
	for i := range n {
		f.leaves[i] = rfc6962.DefaultHasher.HashLeaf(testLeaf(i))
		if err := ref.Append(f.leaves[i], nil); err != nil {
			t.Fatal(err)
		}
		root, err := ref.GetRootHash(nil)
		if err != nil {
			t.Fatal(err)
		}
		f.roots[i+1] = root
	}
	for size := uint64(0); size < n; {
		batch := min(n-size, 1+rng.Uint64N(64))
		nodes, root, err := AppendMany(ctx, f.m, size, f.leaves[size:size+batch])
		if err != nil {
			t.Fatalf("AppendMany(%d, %d leaves): %v", size, batch, err)
		}
		f.m.Put(nodes)
		size += batch
		if !bytes.Equal(root, f.roots[size]) {
			t.Fatalf("AppendMany root at size %d = %x, want %x", size, root, f.roots[size])
		}
	}
	if got, want := f.m.Len(), int(2*n)-popcount(n); got != want {
		t.Fatalf("stored %d nodes, want %d", got, want)
	}
	return f
}

func popcount(n uint64) int {
	c := 0
	for ; n != 0; n &= n - 1 {
		c++
	}
	return c
}

// tamper returns a copy of p with one bit of one hash flipped.
func tamper(p [][]byte, rng *rand.Rand) [][]byte {
	q := make([][]byte, len(p))
	for i := range p {
		q[i] = bytes.Clone(p[i])
	}
	i := rng.IntN(len(q))
	q[i][rng.IntN(len(q[i]))] ^= 1 << rng.IntN(8)
	return q
}

func (f *fixture) checkInclusion(t testing.TB, index, size uint64, rng *rand.Rand) {
	t.Helper()
	p, err := InclusionProof(context.Background(), f.m, index, size)
	if err != nil {
		t.Fatalf("InclusionProof(%d, %d): %v", index, size, err)
	}
	leaf, root := f.leaves[index], f.roots[size]
	if err := proof.VerifyInclusion(rfc6962.DefaultHasher, index, size, leaf, p, root); err != nil {
		t.Fatalf("proof.VerifyInclusion(%d, %d): %v", index, size, err)
	}
	if err := VerifyInclusion(leaf, index, size, p, root); err != nil {
		t.Fatalf("VerifyInclusion(%d, %d): %v", index, size, err)
	}
	if len(p) > 0 {
		if err := VerifyInclusion(leaf, index, size, tamper(p, rng), root); err == nil {
			t.Fatalf("VerifyInclusion(%d, %d) accepted a tampered proof", index, size)
		}
		if err := VerifyInclusion(leaf, index, size, p[:len(p)-1], root); err == nil {
			t.Fatalf("VerifyInclusion(%d, %d) accepted a truncated proof", index, size)
		}
		other := (index + 1 + rng.Uint64N(size-1)) % size
		if err := VerifyInclusion(f.leaves[other], index, size, p, root); err == nil {
			t.Fatalf("VerifyInclusion(%d, %d) accepted leaf %d", index, size, other)
		}
	}
}

func (f *fixture) checkConsistency(t testing.TB, from, to uint64, rng *rand.Rand) {
	t.Helper()
	p, err := ConsistencyProof(context.Background(), f.m, from, to)
	if err != nil {
		t.Fatalf("ConsistencyProof(%d, %d): %v", from, to, err)
	}
	r1, r2 := f.roots[from], f.roots[to]
	if err := proof.VerifyConsistency(rfc6962.DefaultHasher, from, to, p, r1, r2); err != nil {
		t.Fatalf("proof.VerifyConsistency(%d, %d): %v", from, to, err)
	}
	if err := VerifyConsistency(from, to, p, r1, r2); err != nil {
		t.Fatalf("VerifyConsistency(%d, %d): %v", from, to, err)
	}
	if len(p) > 0 {
		if err := VerifyConsistency(from, to, tamper(p, rng), r1, r2); err == nil {
			t.Fatalf("VerifyConsistency(%d, %d) accepted a tampered proof", from, to)
		}
	}
	if from > 0 && from < to {
		if err := VerifyConsistency(from, to, p, f.roots[from-1], r2); err == nil {
			t.Fatalf("VerifyConsistency(%d, %d) accepted the wrong first root", from, to)
		}
	}
}

// TestProofsExhaustiveSmall checks every inclusion and consistency proof of
// every tree up to 300 leaves, and compares them byte for byte with the
// reference tree in merkle/testonly.
func TestProofsExhaustiveSmall(t *testing.T) {
	const n = 300
	rng := rand.New(rand.NewPCG(1, 2))
	f := newFixture(t, n, rng)
	seq := appendAll(t, f.leaves, func(size uint64) []byte { return f.roots[size] })
	if !maps.EqualFunc(seq.nodes, f.m.nodes, bytes.Equal) {
		t.Fatal("Append one leaf at a time and AppendMany in batches stored different nodes")
	}
	ref := testonly.New(rfc6962.DefaultHasher)
	ref.Append(f.leaves...)
	ctx := context.Background()
	// Sizes are dealt round-robin to parallel subtests to balance the work.
	const shards = 4
	for shard := range uint64(shards) {
		t.Run(fmt.Sprintf("shard%d", shard), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(shard, 7))
			for size := shard; size <= n; size += shards {
				if got, want := refRoot(f.leaves[:size]), f.roots[size]; !bytes.Equal(got, want) {
					t.Fatalf("reference roots disagree at size %d", size)
				}
				root, err := RootHash(ctx, f.m, size)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(root, f.roots[size]) {
					t.Fatalf("RootHash(%d) = %x, want %x", size, root, f.roots[size])
				}
				for i := range size {
					f.checkInclusion(t, i, size, rng)
					if i%17 == 0 {
						got, _ := InclusionProof(ctx, f.m, i, size)
						want, err := ref.InclusionProof(i, size)
						if err != nil {
							t.Fatal(err)
						}
						if fmt.Sprint(hexes(got)) != fmt.Sprint(hexes(want)) {
							t.Fatalf("InclusionProof(%d, %d) differs from merkle/testonly", i, size)
						}
					}
				}
				for from := uint64(0); from <= size; from++ {
					f.checkConsistency(t, from, size, rng)
					if from%17 == 0 {
						got, _ := ConsistencyProof(ctx, f.m, from, size)
						want, err := ref.ConsistencyProof(from, size)
						if err != nil {
							t.Fatal(err)
						}
						if fmt.Sprint(hexes(got)) != fmt.Sprint(hexes(want)) {
							t.Fatalf("ConsistencyProof(%d, %d) differs from merkle/testonly", from, size)
						}
					}
				}
			}
		})
	}
}

// TestProofsSampled checks random proofs in a tree of 65,535 leaves. With
// -tlog.long it also checks, for every size below 65,536, the root and
// proofs at the edges and at a random point.
func TestProofsSampled(t *testing.T) {
	const n = 1<<16 - 1
	rng := rand.New(rand.NewPCG(3, 4))
	f := newFixture(t, n, rng)
	samples := 2000
	if *longTests {
		samples = 200000
	}
	for range samples {
		size := 1 + rng.Uint64N(n)
		f.checkInclusion(t, rng.Uint64N(size), size, rng)
		f.checkConsistency(t, rng.Uint64N(size+1), size, rng)
	}
	if !*longTests {
		return
	}
	ctx := context.Background()
	for size := uint64(1); size <= n; size++ {
		root, err := RootHash(ctx, f.m, size)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(root, f.roots[size]) {
			t.Fatalf("RootHash(%d) = %x, want %x", size, root, f.roots[size])
		}
		f.checkInclusion(t, 0, size, rng)
		f.checkInclusion(t, size-1, size, rng)
		f.checkInclusion(t, rng.Uint64N(size), size, rng)
		f.checkConsistency(t, size-1, size, rng)
		f.checkConsistency(t, rng.Uint64N(size+1), size, rng)
		f.checkConsistency(t, size, n, rng)
	}
}

// FuzzProofs checks inclusion and consistency proofs for fuzzer-chosen
// positions in a 4,099-leaf tree.
func FuzzProofs(f *testing.F) {
	const n = 4099
	rng := rand.New(rand.NewPCG(5, 6))
	fx := newFixture(f, n, rng)
	for _, seed := range [][3]uint64{{0, 1, 0}, {5, 8, 6}, {4098, 4099, 4096}, {1023, 1024, 1023}, {17, 3000, 2999}} {
		f.Add(seed[0], seed[1], seed[2])
	}
	f.Fuzz(func(t *testing.T, index, size, from uint64) {
		size = 1 + size%n
		index %= size
		from %= size + 1
		fx.checkInclusion(t, index, size, rng)
		fx.checkConsistency(t, from, size, rng)
	})
}
