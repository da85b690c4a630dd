package httpapi

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/tlog"
	"golang.org/x/mod/sumdb/note"
)

// TestLogProofsVerify fetches a checkpoint, entries and proofs over HTTP and
// checks them with the tlog verifier: what a client auditing the server does.
func TestLogProofsVerify(t *testing.T) {
	e := newEnv(t, Options{})
	alice := e.principal("acme", "alice", []string{"user"})
	mallory := e.principal("acme-corp", "mallory", []string{"user"})
	for i := range 3 {
		want(t, e.do(alice, "POST", "/v1/memories", MemoryRequest{Namespace: "n", Class: "episode", Body: fmt.Sprintf("entry %d", i), Channel: "user"}), 201, "")
	}
	open := func(who ...string) (uint64, []byte) {
		t.Helper()
		tenant := "acme"
		if len(who) > 0 {
			tenant = "acme-corp"
		}
		r := e.do(append(who, alice)[0], "GET", "/v1/log/checkpoint", nil)
		want(t, r, 200, "")
		if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
			t.Fatalf("checkpoint Content-Type %q", ct)
		}
		cp, err := e.svc.OpenCheckpoint(tenant, r.body)
		if err != nil {
			t.Fatalf("checkpoint %q does not verify: %v", r.body, err)
		}
		return cp.Size, cp.Root
	}
	size1, root1 := open()

	r := e.do(alice, "GET", fmt.Sprintf("/v1/log/entries?start=0&end=%d", size1), nil)
	want(t, r, 200, "")
	var entries LogEntriesResponse
	if err := json.Unmarshal(r.body, &entries); err != nil || uint64(len(entries.Entries)) != size1 {
		t.Fatalf("entries: %v, %d of %d", err, len(entries.Entries), size1)
	}
	own := 0
	for _, le := range entries.Entries {
		if le.Leaf == "" {
			if le.Tenant != "" || le.Details != nil {
				t.Fatalf("a foreign entry is decoded: %+v", le)
			}
			continue
		}
		own++
		leaf, _ := base64.StdEncoding.DecodeString(le.Leaf)
		if got := base64.StdEncoding.EncodeToString(tlog.LeafHash(leaf)); got != le.LeafHash {
			t.Fatalf("entry %d: leaf hash %s, computed %s", le.Index, le.LeafHash, got)
		}
		if le.Tenant != "acme" || le.Transition == "" || le.Signature == "" || le.Time == nil {
			t.Fatalf("entry %d not decoded: %+v", le.Index, le)
		}
		var p InclusionProofResponse
		r := e.do(alice, "GET", fmt.Sprintf("/v1/log/proof/inclusion?index=%d&size=%d", le.Index, size1), nil)
		want(t, r, 200, "")
		if err := json.Unmarshal(r.body, &p); err != nil {
			t.Fatal(err)
		}
		if err := tlog.VerifyInclusion(tlog.LeafHash(leaf), le.Index, size1, unb64(t, p.Hashes), root1); err != nil {
			t.Fatalf("inclusion of %d in %d: %v", le.Index, size1, err)
		}
	}
	if own != 3 { // her three records; acme/alice's principal entry is for admins and auditors
		t.Fatalf("%d of acme's entries decoded for alice, want her 3", own)
	}

	// acme-corp's writes go to its own log: acme's does not grow, and
	// mallory's checkpoint is of another tree, under another origin, which
	// no proof of acme's entries checks against.
	want(t, e.do(mallory, "POST", "/v1/memories", MemoryRequest{Namespace: "n", Class: "episode", Body: "corp", Channel: "user"}), 201, "")
	if size, root := open(); size != size1 || !bytes.Equal(root, root1) {
		t.Fatalf("acme's log moved from %d to %d entries with acme-corp's write", size1, size)
	}
	corpSize, corpRoot := open(mallory)
	if corpSize != 2 || bytes.Equal(corpRoot, root1) {
		t.Fatalf("acme-corp's log has %d entries (want its principal and its record), root equal to acme's: %v", corpSize, bytes.Equal(corpRoot, root1))
	}
	var p InclusionProofResponse
	r = e.do(alice, "GET", fmt.Sprintf("/v1/log/proof/inclusion?index=%d&size=%d", 1, 2), nil)
	want(t, r, 200, "")
	if err := json.Unmarshal(r.body, &p); err != nil {
		t.Fatal(err)
	}
	aliceLeaf, _ := base64.StdEncoding.DecodeString(entries.Entries[1].LeafHash)
	if err := tlog.VerifyInclusion(aliceLeaf, 1, 2, unb64(t, p.Hashes), corpRoot); err == nil {
		t.Fatal("a proof of acme's entry verifies against acme-corp's checkpoint")
	}
	acme2, err := tlog.RootHash(e.ctx, custody.LogOf(e.store, "acme"), 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := tlog.VerifyInclusion(aliceLeaf, 1, 2, unb64(t, p.Hashes), acme2); err != nil {
		t.Fatalf("the proof of acme's entry against acme's tree of 2: %v", err)
	}
	want(t, e.do(alice, "POST", "/v1/memories", MemoryRequest{Namespace: "n", Class: "episode", Body: "more", Channel: "user"}), 201, "")
	size2, root2 := open()
	var c ConsistencyProofResponse
	r = e.do(alice, "GET", fmt.Sprintf("/v1/log/proof/consistency?from=%d&to=%d", size1, size2), nil)
	want(t, r, 200, "")
	if err := json.Unmarshal(r.body, &c); err != nil {
		t.Fatal(err)
	}
	if err := tlog.VerifyConsistency(size1, size2, unb64(t, c.Hashes), root1, root2); err != nil {
		t.Fatalf("consistency %d -> %d: %v", size1, size2, err)
	}
	// mallory reads her tenant's log, which holds nothing of acme's.
	r = e.do(mallory, "GET", fmt.Sprintf("/v1/log/entries?start=0&end=%d", size2), nil)
	want(t, r, 200, "")
	if strings.Contains(r.String(), `"acme"`) || strings.Contains(r.String(), "acme/alice") || !strings.Contains(r.String(), "acme-corp/mallory") {
		t.Fatalf("acme-corp's log as mallory reads it: %s", r)
	}

	for _, path := range []string{
		"/v1/log/proof/inclusion?index=5", "/v1/log/proof/inclusion?index=-1&size=2", fmt.Sprintf("/v1/log/proof/inclusion?index=0&size=%d", size2+1),
		"/v1/log/proof/consistency?from=3&to=2", "/v1/log/entries?start=2&end=1", "/v1/log/entries?start=x&end=1",
	} {
		want(t, e.do(alice, "GET", path, nil), http.StatusBadRequest, "invalid_input")
	}
}

func unb64(t *testing.T, ss []string) [][]byte {
	t.Helper()
	out := make([][]byte, len(ss))
	for i, s := range ss {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = b
	}
	return out
}

// TestLogKeyIsPublished: the verifier key of a tenant's log is served
// without a token as one C2SP vkey line, and it verifies the checkpoint a
// principal of that tenant fetches; a key of another log does not, nor
// does the key of another tenant's log (each has its own origin), and a
// request that names no tenant is refused.
func TestLogKeyIsPublished(t *testing.T) {
	e := newEnv(t, Options{})
	alice := e.principal("acme", "alice", []string{"user"})
	want(t, e.do(alice, "POST", "/v1/memories", MemoryRequest{Namespace: "n", Class: "episode", Body: "an entry", Channel: "user"}), 201, "")
	want(t, e.do("", "GET", "/v1/log/key", nil), 400, "invalid")
	r := e.do("", "GET", "/v1/log/key?tenant=acme", nil)
	want(t, r, 200, "")
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("key Content-Type %q", ct)
	}
	vkey := strings.TrimSpace(string(r.body))
	v, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatalf("GET /v1/log/key = %q: not a signed-note verifier key: %v", r.body, err)
	}
	cp := e.do(alice, "GET", "/v1/log/checkpoint", nil)
	want(t, cp, 200, "")
	if _, err := note.Open(cp.body, note.VerifierList(v)); err != nil {
		t.Fatalf("the published key does not verify the checkpoint: %v", err)
	}
	_, other, err := note.GenerateKey(nil, strings.SplitN(vkey, "+", 2)[0])
	if err != nil {
		t.Fatal(err)
	}
	ov, _ := note.NewVerifier(other)
	if _, err := note.Open(cp.body, note.VerifierList(ov)); err == nil {
		t.Fatal("another key with the same origin verifies the checkpoint")
	}
	r = e.do("", "GET", "/v1/log/key?tenant=beta", nil)
	want(t, r, 200, "")
	bv, err := note.NewVerifier(strings.TrimSpace(string(r.body)))
	if err != nil {
		t.Fatal(err)
	}
	if bv.Name() == v.Name() || bv.Name() != e.svc.LogOrigin("beta") {
		t.Fatalf("beta's log key is named %q, acme's %q; want beta's origin %q", bv.Name(), v.Name(), e.svc.LogOrigin("beta"))
	}
	if _, err := note.Open(cp.body, note.VerifierList(bv)); err == nil {
		t.Fatal("the key of beta's log verifies acme's checkpoint")
	}
}
