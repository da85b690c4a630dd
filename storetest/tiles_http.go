package storetest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"

	"filippo.io/torchwood"
	"golang.org/x/mod/sumdb/note"
	sumdb "golang.org/x/mod/sumdb/tlog"
)

// testTilesHTTP reads the log as C2SP tlog-tiles, as an outside verifier
// does: the checkpoint and hash tiles without a token, every leaf proved
// from them (x/mod's TileHashReader checks each tile against the root,
// so the backend's stored nodes of every height are what is checked), and
// the entry bundles, read by the tenant's auditor alone.
func testTilesHTTP(t *testing.T, a *apiEnv) {
	a.add("acme", "alice", []string{"user"})
	a.add("acme", "audrey", []string{"auditor"})
	var batch struct {
		Items []memoryRequest `json:"items"`
	}
	for i := range 300 {
		batch.Items = append(batch.Items, memoryRequest{Namespace: "n", Class: "episode", Body: fmt.Sprintf("entry %d", i), Channel: "user"})
	}
	a.call("alice", "POST", "/v1/memories/batch", batch, 200, nil)
	cp := a.checkpoint("alice") // signs one

	res, err := http.Get(a.srv.URL + logPrefix(a, "acme") + "/checkpoint")
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("anonymous checkpoint: %d %s", res.StatusCode, msg)
	}
	anon, err := a.svc.OpenCheckpoint("acme", msg)
	if err != nil || anon.Size != cp.Size {
		t.Fatalf("anonymous checkpoint %+v, %v; want size %d", anon, err, cp.Size)
	}
	n, err := note.Open(msg, note.VerifierList(mustVerifier(t, a)))
	if err != nil {
		t.Fatal(err)
	}
	tc, err := torchwood.ParseCheckpoint(n.Text)
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := a.entries("audrey", cp.Size)
	fetcher, err := torchwood.NewTileFetcher(a.srv.URL + logPrefix(a, "acme"))
	if err != nil {
		t.Fatal(err)
	}
	hr := torchwood.TileHashReaderWithContext(context.Background(), tc.Tree, fetcher)
	for i := range cp.Size {
		h, err := entries[i].hash()
		if err != nil {
			t.Fatal(err)
		}
		p, err := sumdb.ProveRecord(tc.N, int64(i), hr)
		if err != nil {
			t.Fatalf("proving leaf %d from the tiles: %v", i, err)
		}
		if err := sumdb.CheckRecord(p, tc.N, tc.Hash, int64(i), sumdb.Hash(h)); err != nil {
			t.Fatalf("leaf %d: %v", i, err)
		}
	}

	bundle := func(who string) (int, []byte) {
		req, _ := http.NewRequest("GET", a.srv.URL+logPrefix(a, "acme")+"/tile/entries/000", nil)
		req.Header.Set("Authorization", "Bearer "+a.tokens[who])
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}
	if status, _ := bundle("alice"); status != 403 {
		t.Fatalf("a user's entry bundle: %d, want 403", status)
	}
	status, b := bundle("audrey")
	if status != 200 {
		t.Fatalf("the auditor's entry bundle: %d %s", status, b)
	}
	for i := range 256 {
		leaf, rest, err := torchwood.ReadTileEntry(b)
		if err != nil {
			t.Fatalf("bundle entry %d: %v", i, err)
		}
		if got := sumdb.RecordHash(leaf); !bytes.Equal(got[:], mustHash(t, entries[uint64(i)])) {
			t.Fatalf("bundle entry %d is not leaf %d", i, i)
		}
		b = rest
	}
	if len(b) != 0 {
		t.Fatalf("%d bytes after the 256 entries of a full bundle", len(b))
	}

	// Another tenant's tiles are another tree: its own origin and size.
	a.add("globex", "gail", []string{"user"})
	a.call("gail", "POST", "/v1/memories", memoryRequest{Namespace: "n", Class: "episode", Body: "globex entry", Channel: "user"}, 201, nil)
	a.checkpoint("gail")
	res, err = http.Get(a.srv.URL + logPrefix(a, "globex") + "/checkpoint")
	if err != nil {
		t.Fatal(err)
	}
	msg, _ = io.ReadAll(res.Body)
	res.Body.Close()
	other, err := a.svc.OpenCheckpoint("globex", msg)
	if err != nil || other.Origin == anon.Origin || other.Size >= anon.Size {
		t.Fatalf("globex's checkpoint %+v, %v: want its own origin and a smaller tree than acme's %+v", other, err, anon)
	}
}

// logPrefix is where tenant's log is published, /log/ and its ID.
func logPrefix(a *apiEnv, tenant string) string { return "/log/" + a.svc.LogIDs().ID(tenant) }

func mustHash(t *testing.T, le logEntry) []byte {
	t.Helper()
	h, err := le.hash()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func mustVerifier(t *testing.T, a *apiEnv) note.Verifier {
	t.Helper()
	vkey, err := a.svc.VerifierKey("acme")
	if err != nil {
		t.Fatal(err)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
