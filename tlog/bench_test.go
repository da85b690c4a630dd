package tlog

import (
	"context"
	"math/rand/v2"
	"testing"
)

func BenchmarkInclusionProof(b *testing.B) {
	const n = 1 << 20
	m, size, root, err := Rebuild(leafSource(n), nil)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 1))
	b.ReportAllocs()
	for b.Loop() {
		i := rng.Uint64N(size)
		p, err := InclusionProof(ctx, m, i, size)
		if err != nil {
			b.Fatal(err)
		}
		_ = p
	}
	b.StopTimer()
	p, _ := InclusionProof(ctx, m, 12345, size)
	if err := VerifyInclusion(LeafHash(testLeaf(12345)), 12345, size, p, root); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkAppend(b *testing.B) {
	ctx := context.Background()
	m := NewMemNodes()
	var size uint64
	b.ReportAllocs()
	for b.Loop() {
		nodes, _, err := Append(ctx, m, size, LeafHash(testLeaf(size)))
		if err != nil {
			b.Fatal(err)
		}
		m.Put(nodes)
		size++
	}
}

func BenchmarkAppendMany100(b *testing.B) {
	ctx := context.Background()
	m := NewMemNodes()
	var size uint64
	batch := make([][]byte, 100)
	b.ReportAllocs()
	for b.Loop() {
		for i := range batch {
			batch[i] = LeafHash(testLeaf(size + uint64(i)))
		}
		nodes, _, err := AppendMany(ctx, m, size, batch)
		if err != nil {
			b.Fatal(err)
		}
		m.Put(nodes)
		size += uint64(len(batch))
	}
}

func BenchmarkEntrySign(b *testing.B) {
	priv := testKey(1)
	e := sampleEntry()
	b.ReportAllocs()
	for b.Loop() {
		e.Sign(priv)
	}
}

func BenchmarkParseLeaf(b *testing.B) {
	e := sampleEntry()
	e.Sign(testKey(1))
	leaf := e.Leaf()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseLeaf(leaf); err != nil {
			b.Fatal(err)
		}
	}
}
