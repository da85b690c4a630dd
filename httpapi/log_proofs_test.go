package httpapi

import (
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/custody-mem/custody/tlog"
)

// TestInclusionProofsBatch proves every leaf of the log in one request and
// checks each proof against the signed checkpoint; bad requests are 400.
func TestInclusionProofsBatch(t *testing.T) {
	e, alice, _ := tileFixture(t, 20)
	cp, err := e.svc.OpenCheckpoint("acme", e.do(alice, "GET", "/v1/log/checkpoint", nil).body)
	if err != nil {
		t.Fatal(err)
	}
	hashes := leafHashes(t, e, alice, int64(cp.Size))
	req := InclusionProofsRequest{Size: cp.Size}
	for i := range cp.Size {
		req.Indexes = append(req.Indexes, cp.Size-1-i) // any order
	}
	r := e.do(alice, "POST", "/v1/log/proofs", req)
	want(t, r, 200, "")
	var got InclusionProofsResponse
	if err := json.Unmarshal(r.body, &got); err != nil || len(got.Proofs) != len(req.Indexes) {
		t.Fatalf("answer %v: %s", err, r.body)
	}
	for i, p := range got.Proofs {
		if p.Index != req.Indexes[i] || p.Size != cp.Size {
			t.Fatalf("proof %d is of index %d size %d, want %d size %d", i, p.Index, p.Size, req.Indexes[i], cp.Size)
		}
		var proof [][]byte
		for _, h := range p.Hashes {
			b, _ := base64.StdEncoding.DecodeString(h)
			proof = append(proof, b)
		}
		if err := tlog.VerifyInclusion(hashes[p.Index][:], p.Index, cp.Size, proof, cp.Root); err != nil {
			t.Fatalf("proof of leaf %d: %v", p.Index, err)
		}
		if p.Index > 0 {
			if err := tlog.VerifyInclusion(hashes[p.Index-1][:], p.Index, cp.Size, proof, cp.Root); err == nil {
				t.Fatalf("leaf %d's proof proves leaf %d's hash", p.Index, p.Index-1)
			}
		}
	}

	many := InclusionProofsRequest{Size: cp.Size, Indexes: make([]uint64, 1001)}
	for _, c := range []struct {
		name string
		body any
	}{
		{"no indexes", InclusionProofsRequest{Size: cp.Size}},
		{"too many", many},
		{"index beyond the size", InclusionProofsRequest{Size: 2, Indexes: []uint64{0, 2}}},
		{"size beyond the log", InclusionProofsRequest{Size: cp.Size + 100, Indexes: []uint64{0}}},
		{"unknown field", `{"indexes":[0],"size":1,"extra":1}`},
	} {
		t.Run(c.name, func(t *testing.T) { want(t, e.send(t, alice, "POST", "/v1/log/proofs", c.body), 400, "") })
	}
	want(t, e.do("", "POST", "/v1/log/proofs", InclusionProofsRequest{Size: 1, Indexes: []uint64{0}}), 401, "")
}
