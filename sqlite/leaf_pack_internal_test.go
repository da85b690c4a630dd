package sqlite

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"
)

// logVectors are the leaves of docs/log-vectors.json, one of each entry
// kind.
func logVectors(t testing.TB) [][]byte {
	t.Helper()
	data, err := os.ReadFile("../docs/log-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var vs []struct {
		Leaf string `json:"leaf"`
	}
	if err := json.Unmarshal(data, &vs); err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, v := range vs {
		b, err := hex.DecodeString(v.Leaf)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	if len(out) < 10 {
		t.Fatalf("%d log vectors; want one of each kind", len(out))
	}
	return out
}

// Every kind of entry packs smaller and unpacks to the same bytes.
func TestPackLeafRoundTrip(t *testing.T) {
	var signed, stored int
	for i, leaf := range logVectors(t) {
		p := packLeaf(leaf)
		if p == nil {
			t.Errorf("vector %d (%d bytes) was not packed", i, len(leaf))
			continue
		}
		if !bytes.HasPrefix(p, packedLeaf) || len(p) >= len(leaf) {
			t.Errorf("vector %d packed to %d bytes of %d, prefix %x", i, len(p), len(leaf), p[:2])
		}
		if got := unpackLeaf(p); !bytes.Equal(got, leaf) {
			t.Errorf("vector %d unpacks to other bytes", i)
		}
		signed += len(leaf)
		stored += len(p)
	}
	t.Logf("log vectors: %d bytes signed, %d packed", signed, stored)
}

// Bytes that are no entry are stored as they are, and read as they are;
// so are packed bytes that do not inflate to an entry.
func TestUnpackLeafLeavesOtherBytes(t *testing.T) {
	leaf := logVectors(t)[0]
	for _, b := range [][]byte{nil, {}, []byte("not an entry"), {0x00}, {0x00, 0x02, 0x03}, leaf[1:]} {
		if packLeaf(b) != nil {
			t.Errorf("%q was packed", b)
		}
		if got := unpackLeaf(b); !bytes.Equal(got, b) {
			t.Errorf("%q read as %q", b, got)
		}
	}
	p := packLeaf(leaf)
	for name, damaged := range map[string][]byte{
		"cut":        p[:len(p)-5],
		"byte":       append(append(append([]byte{}, p[:10]...), p[10]^0xff), p[11:]...),
		"no entry":   append(append([]byte{}, packedLeaf...), packLeaf(append([]byte("custody-entry\x00\x01"), 'x'))[2:]...)[:2],
		"only magic": packedLeaf,
	} {
		got := unpackLeaf(damaged)
		if !bytes.Equal(got, damaged) && !bytes.HasPrefix(got, []byte(entryPrefix)) {
			t.Errorf("%s: read as %x", name, got)
		}
		if bytes.Equal(got, leaf) {
			t.Errorf("%s: still reads as the leaf", name)
		}
	}
}

// packedVector is log vector 0 as phrase list 1 packs it: a stored leaf
// must unpack with the phrases it was packed with, so the list may never
// change.
const packedVector = "" +
	"0001801f0461636d651a30314a4451325238573359354e374b394d315033533556375839822120e8029594a35f63fd99" +
	"3850e2defce6c47d5ef8ccea8cdad66102d5282c05da9e407fc5ad120fb9af314a4a45eb7c8934145087f995daff9996" +
	"8501683a0c84a794730a0a61636d652f616c696365f6086b0d2d3e149aa43513a3a6abaeb413323032362d31312d3330" +
	"5430383a30313a30322e633456789001315ab6ba13323032362d31322d30315432303a30313a30322e63345678900131" +
	"5abc7fc203729d2c2eb1549ad26053f0a34ca9f1cf65abc5d5d3fa0062cc28df2fac3dbf04046962616ebd7f8dad6e22" +
	"0f7dd2abe55dda8e0510e4a42bc48fa58f5b813884f454d6daa654c2c0070762696c6c696e67c10505616c696365c33b" +
	"3b30314a4451325238573359354e374b394d3150335335563758423d302e352c30314a4451325238573359354e374b39" +
	"4d3150335335563758433d31c62020612075736572277320666163742069732068656c6420666f7220726576696577c9" +
	"1212686f6c642d66616374732c6e6f2d75726c73941a1a30314a4451325238573359354e374b394d3150335335563758" +
	"41cc07076d61696c3a3432cdcf0b0a61636d652f616c69636510676a3803d5f059902a404013c2eeaea33bff411ba972" +
	"5d56b90a9c810886056aa3bae65359711a3682bdaa3b56922547005700058e20a2ce2ec69d3857ecc5b6b862d57d4f37" +
	"643ab3360d"

func TestPackedLeafKnownAnswer(t *testing.T) {
	leaf := logVectors(t)[0]
	p, err := hex.DecodeString(packedVector)
	if err != nil {
		t.Fatal(err)
	}
	if got := unpackLeaf(p); !bytes.Equal(got, leaf) {
		t.Fatal("the stored packed vector no longer unpacks to the leaf: leafPhrases changed")
	}
}

// Whatever a row holds, reading it neither panics nor returns what is no
// entry unless it is the row's own bytes.
func FuzzUnpackLeaf(f *testing.F) {
	for _, leaf := range logVectors(f) {
		f.Add(packLeaf(leaf))
		f.Add(leaf)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got := unpackLeaf(data)
		if !bytes.Equal(got, data) && !bytes.HasPrefix(got, []byte(entryPrefix)) {
			t.Fatalf("read %x as %x", data, got)
		}
		if p := packLeaf(got); p != nil && !bytes.Equal(unpackLeaf(p), got) {
			t.Fatalf("%x does not round trip", got)
		}
	})
}
