package independent_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/torchwood"
	formats "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// logName is the installation's log name; each tenant's log has the
// origin logName/tenant (docs/log-format.md).
const logName = "example.com/independent/log"

// origin is the origin of acme's log, the one verified here.
const origin = logName + "/acme"

// openCheckpoint opens a checkpoint with the server's and the witness's
// verifiers, requiring both signatures.
func openCheckpoint(t *testing.T, msg []byte, server, wit note.Verifier) torchwood.Checkpoint {
	t.Helper()
	n, err := note.Open(msg, note.VerifierList(server, wit))
	if err != nil {
		t.Fatalf("checkpoint does not open with the published keys: %v\n%s", err, msg)
	}
	signed := map[string]bool{}
	for _, s := range n.Sigs {
		signed[fmt.Sprintf("%s+%08x", s.Name, s.Hash)] = true
	}
	for _, v := range []note.Verifier{server, wit} {
		if !signed[fmt.Sprintf("%s+%08x", v.Name(), v.KeyHash())] {
			t.Fatalf("checkpoint lacks the signature of %s:\n%s", v.Name(), msg)
		}
	}
	cp, err := torchwood.ParseCheckpoint(n.Text)
	if err != nil {
		t.Fatal(err)
	}
	if cp.Origin != origin || cp.Extension != "" {
		t.Fatalf("checkpoint of origin %q with extension %q", cp.Origin, cp.Extension)
	}
	return cp
}

// waitCheckpoint waits for an anonymous checkpoint of at least size
// leaves that the witness cosigned, from the log at url.
func waitCheckpoint(t *testing.T, url string, size int64, server, wit note.Verifier, log fmt.Stringer) torchwood.Checkpoint {
	t.Helper()
	var cp torchwood.Checkpoint
	waitFor(t, fmt.Sprintf("a cosigned checkpoint of %d entries", size), func() bool {
		status, body, _ := get(url + "/checkpoint")
		if status != 200 {
			return false
		}
		n, err := note.Open(body, note.VerifierList(server, wit))
		if err != nil || len(n.Sigs) != 2 {
			return false
		}
		cp = openCheckpoint(t, body, server, wit)
		return cp.N >= size
	}, log)
	return cp
}

// TestIndependentVerifier drives a custody server from outside and checks
// its log as docs/log-format.md says a verifier can: every entry's
// inclusion from the anonymous hash tiles, the consistency of two
// checkpoints, the server's signature with the published key, the
// witness's cosignature, and each entry's decoding and signature.
func TestIndependentVerifier(t *testing.T) {
	if testing.Short() {
		t.Skip("builds custody and litewitness: not in -short")
	}
	bin := custodyBin(t)
	db := filepath.Join(t.TempDir(), "c.db")
	store := []string{"--db", db, "--origin", logName}
	alice := run(t, bin, append([]string{"principal", "add", "--tenant", "acme", "--name", "alice", "--role", "user"}, store...)...)
	auditor := run(t, bin, append([]string{"principal", "add", "--tenant", "acme", "--name", "audrey", "--role", "auditor"}, store...)...)
	vkey := run(t, bin, append([]string{"log", "key", "--tenant", "acme"}, store...)...)
	w := startWitness(t, run(t, bin, append([]string{"log", "list"}, store...)...))
	logPath := publishedPath(t, bin, "acme", store...)
	url, log := serve(t, bin, append([]string{"--witness", w.url + "=" + w.vkey, "--checkpoint-interval", "100ms"}, store...)...)

	// The published key is the one the CLI prints.
	status, published, _ := get(url + "/v1/log/key?tenant=acme")
	if status != 200 || strings.TrimSpace(string(published)) != vkey {
		t.Fatalf("GET /v1/log/key = %d %q, custody log key printed %q", status, published, vkey)
	}
	server, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	wit, err := formats.NewVerifierForCosignatureV1(w.vkey)
	if err != nil {
		t.Fatal(err)
	}
	serverKey, err := base64.StdEncoding.DecodeString(strings.SplitN(vkey, "+", 3)[2]) // name+hash+key
	if err != nil || len(serverKey) != 33 || serverKey[0] != 1 {
		t.Fatalf("vkey %q does not hold an Ed25519 key", vkey)
	}

	// Writes, plain HTTP and JSON: more than one tile's worth.
	type memory struct {
		Namespace string `json:"namespace"`
		Class     string `json:"class"`
		Body      string `json:"body"`
		Channel   string `json:"channel"`
	}
	batch := func(n int, tag string) int64 {
		var req struct {
			Items []memory `json:"items"`
		}
		for i := range n {
			req.Items = append(req.Items, memory{"notes", "episode", fmt.Sprintf("%s %d", tag, i), "user"})
		}
		var res struct {
			Items []struct {
				LogIndex int64 `json:"log_index"`
			} `json:"items"`
		}
		call(t, alice, "POST", url+"/v1/memories/batch", req, &res, 200)
		return res.Items[len(res.Items)-1].LogIndex
	}
	first := waitCheckpoint(t, url+logPath, batch(300, "first")+1, server, wit, log)
	last := batch(20, "second")
	second := waitCheckpoint(t, url+logPath, last+1, server, wit, log)
	if second.N <= first.N {
		t.Fatalf("checkpoints of %d then %d entries", first.N, second.N)
	}

	// The entries, from the bundles (the auditor's), checked against the
	// hash tiles by torchwood's client as it reads them.
	fetcher, err := torchwood.NewTileFetcher(url+logPath, torchwood.WithHTTPClient(&http.Client{Transport: bearer(auditor)}))
	if err != nil {
		t.Fatal(err)
	}
	client, err := torchwood.NewClient(fetcher)
	if err != nil {
		t.Fatal(err)
	}
	var leaves [][]byte
	for pass := 0; int64(len(leaves)) < second.N && pass < 10; pass++ {
		for i, leaf := range client.Entries(context.Background(), second.Tree, int64(len(leaves))) {
			if i != int64(len(leaves)) {
				t.Fatalf("entry %d came as %d", len(leaves), i)
			}
			leaves = append(leaves, bytes.Clone(leaf))
		}
		if err := client.Err(); err != nil {
			t.Fatal(err)
		}
	}
	if int64(len(leaves)) != second.N {
		t.Fatalf("read %d entries of %d", len(leaves), second.N)
	}

	// Each entry decodes, is signed by its actor, and proves its inclusion
	// from the anonymous hash tiles alone.
	anon, err := torchwood.NewTileFetcher(url + logPath)
	if err != nil {
		t.Fatal(err)
	}
	hr := torchwood.TileHashReaderWithContext(context.Background(), second.Tree, anon)
	sig := &signers{server: ed25519.PublicKey(serverKey[1:]), principals: map[string]ed25519.PublicKey{}}
	kinds := map[string]int{}
	for i, leaf := range leaves {
		e, err := decodeLeaf(leaf)
		if err != nil {
			t.Fatalf("entry %d does not decode: %v", i, err)
		}
		if err := sig.check(e); err != nil {
			t.Fatalf("entry %d (%s): %v", i, e.Transition, err)
		}
		kinds[e.Transition]++
		p, err := tlog.ProveRecord(second.N, int64(i), hr)
		if err != nil {
			t.Fatal(err)
		}
		if err := tlog.CheckRecord(p, second.N, second.Hash, int64(i), tlog.RecordHash(leaf)); err != nil {
			t.Fatalf("entry %d is not in the checkpoint's tree: %v", i, err)
		}
	}
	if kinds["principal"] != 2 || kinds["admission"] != 320 {
		t.Fatalf("entries by kind %v; want 2 principals and 320 admissions", kinds)
	}
	// A leaf changed by one byte proves nothing.
	bad := bytes.Clone(leaves[5])
	bad[len(bad)-1] ^= 1
	p, err := tlog.ProveRecord(second.N, 5, hr)
	if err != nil {
		t.Fatal(err)
	}
	if tlog.CheckRecord(p, second.N, second.Hash, 5, tlog.RecordHash(bad)) == nil {
		t.Fatal("a changed leaf proved its inclusion")
	}
	if e, err := decodeLeaf(bad); err == nil && sig.check(e) == nil {
		t.Fatal("a changed signature verified")
	}

	// The older checkpoint is a prefix of the newer.
	tp, err := tlog.ProveTree(second.N, first.N, hr)
	if err != nil {
		t.Fatal(err)
	}
	if err := tlog.CheckTree(tp, second.N, second.Hash, first.N, first.Hash); err != nil {
		t.Fatalf("the checkpoints are not consistent: %v", err)
	}

	// Anonymous callers get hashes only: the bundles need a token, and the
	// user's JSON entries have the same leaf hashes as the bundles.
	if status, _, _ := get(url + logPath + "/tile/entries/000"); status != 401 {
		t.Fatalf("an anonymous entry bundle answered %d", status)
	}
	var page struct {
		Entries []struct {
			Index    int64  `json:"index"`
			LeafHash string `json:"leaf_hash"`
			Leaf     string `json:"leaf"`
		} `json:"entries"`
	}
	call(t, alice, "GET", fmt.Sprintf("%s/v1/log/entries?start=0&end=%d", url, second.N), nil, &page, 200)
	for _, le := range page.Entries {
		h := tlog.RecordHash(leaves[le.Index])
		if le.LeafHash != base64.StdEncoding.EncodeToString(h[:]) {
			t.Fatalf("entry %d: the JSON leaf hash is not the bundle's", le.Index)
		}
	}
}
