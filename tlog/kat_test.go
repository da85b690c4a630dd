package tlog

import (
	"context"
	"encoding/hex"
	"fmt"
	"testing"
)

// RFC 6962 known-answer vectors, as used by Certificate Transparency and by
// github.com/transparency-dev/merkle's testonly package: eight leaves, the
// root of every prefix, and some inclusion and consistency proofs.
var (
	katLeaves = []string{
		"",
		"00",
		"10",
		"2021",
		"3031",
		"40414243",
		"5051525354555657",
		"606162636465666768696a6b6c6d6e6f",
	}
	// katRoots[n] is the root of the tree of the first n leaves.
	katRoots = []string{
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
		"fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
		"aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
		"d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
		"4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
		"76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
		"ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
		"5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
	}
	// katLeafHashes[i] is LeafHash of leaf i.
	katLeafHashes = []string{
		"6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
		"96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
		"0298d122906dcfc10892cb53a73992fc5b9f493ea4c9badb27b791b4127a7fe7",
		"07506a85fd9dd2f120eb694f86011e5bb4662e5c415a62917033d4a9624487e7",
		"bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
		"4271a26be0d8a84f0bd54c8c302e7cb3a3b5d1fa6780a40bcce2873477dab658",
		"b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f",
		"46f6ffadd3d06a09ff3c5860d2755c8b9819db7df44251788c7d8e3180de8eb1",
	}
	katInclusion = []struct {
		index, size uint64
		proof       []string
	}{
		{0, 1, nil},
		{0, 8, []string{
			"96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
			"5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
			"6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
		}},
		{5, 8, []string{
			"bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
			"ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
			"d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
		}},
		{2, 3, []string{
			"fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
		}},
		{1, 5, []string{
			"6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
			"5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
			"bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
		}},
	}
	katConsistency = []struct {
		from, to uint64
		proof    []string
	}{
		{1, 1, nil},
		{1, 8, []string{
			"96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
			"5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
			"6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
		}},
		{6, 8, []string{
			"0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
			"ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
			"d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
		}},
		{2, 5, []string{
			"5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
			"bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
		}},
		{6, 7, []string{
			"0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
			"b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f",
			"d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
		}},
	}
)

func katStore(t *testing.T) *MemNodes {
	t.Helper()
	hashes := make([][]byte, len(katLeaves))
	for i, l := range katLeaves {
		hashes[i] = LeafHash(hd(t, l))
	}
	return appendAll(t, hashes, func(size uint64) []byte { return hd(t, katRoots[size]) })
}

func hexes(p [][]byte) []string {
	out := make([]string, len(p))
	for i, h := range p {
		out[i] = hex.EncodeToString(h)
	}
	return out
}

func TestKnownAnswerLeafHashes(t *testing.T) {
	for i, l := range katLeaves {
		if got, want := hex.EncodeToString(LeafHash(hd(t, l))), katLeafHashes[i]; got != want {
			t.Errorf("LeafHash(%q) = %s, want %s", l, got, want)
		}
	}
}

func TestKnownAnswerRoots(t *testing.T) {
	ctx := context.Background()
	m := katStore(t) // also checks the roots returned by Append
	for size, want := range katRoots {
		root, err := RootHash(ctx, m, uint64(size))
		if err != nil {
			t.Fatalf("RootHash(%d): %v", size, err)
		}
		if got := hex.EncodeToString(root); got != want {
			t.Errorf("RootHash(%d) = %s, want %s", size, got, want)
		}
	}
	t.Run("AppendMany", func(t *testing.T) {
		for split := range len(katLeaves) + 1 {
			m := NewMemNodes()
			var hashes [][]byte
			for _, l := range katLeaves {
				hashes = append(hashes, LeafHash(hd(t, l)))
			}
			nodes, root, err := AppendMany(ctx, m, 0, hashes[:split])
			if err != nil {
				t.Fatal(err)
			}
			m.Put(nodes)
			if got, want := hex.EncodeToString(root), katRoots[split]; got != want {
				t.Errorf("split %d: first root = %s, want %s", split, got, want)
			}
			nodes, root, err = AppendMany(ctx, m, uint64(split), hashes[split:])
			if err != nil {
				t.Fatal(err)
			}
			m.Put(nodes)
			if got, want := hex.EncodeToString(root), katRoots[8]; got != want {
				t.Errorf("split %d: final root = %s, want %s", split, got, want)
			}
			if got, want := m.Len(), 15; got != want {
				t.Errorf("split %d: stored %d nodes, want %d", split, got, want)
			}
		}
	})
}

func TestKnownAnswerInclusion(t *testing.T) {
	ctx := context.Background()
	m := katStore(t)
	for _, tc := range katInclusion {
		t.Run(fmt.Sprintf("%d-of-%d", tc.index, tc.size), func(t *testing.T) {
			p, err := InclusionProof(ctx, m, tc.index, tc.size)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := fmt.Sprint(hexes(p)), fmt.Sprint(tc.proof); got != want {
				t.Errorf("InclusionProof = %v, want %v", got, want)
			}
			leaf := hd(t, katLeafHashes[tc.index])
			if err := VerifyInclusion(leaf, tc.index, tc.size, p, hd(t, katRoots[tc.size])); err != nil {
				t.Errorf("VerifyInclusion: %v", err)
			}
		})
	}
}

func TestKnownAnswerConsistency(t *testing.T) {
	ctx := context.Background()
	m := katStore(t)
	for _, tc := range katConsistency {
		t.Run(fmt.Sprintf("%d-to-%d", tc.from, tc.to), func(t *testing.T) {
			p, err := ConsistencyProof(ctx, m, tc.from, tc.to)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := fmt.Sprint(hexes(p)), fmt.Sprint(tc.proof); got != want {
				t.Errorf("ConsistencyProof = %v, want %v", got, want)
			}
			if err := VerifyConsistency(tc.from, tc.to, p, hd(t, katRoots[tc.from]), hd(t, katRoots[tc.to])); err != nil {
				t.Errorf("VerifyConsistency: %v", err)
			}
		})
	}
}
