package httpapi

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/custody-mem/custody"

	"filippo.io/torchwood"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// bearerTransport adds a bearer token to every request.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// tileFixture is a server whose log holds more than one full tile of
// leaves, and a signed checkpoint of it.
func tileFixture(t *testing.T, n int) (e *env, alice, auditor string) {
	e = newEnv(t, Options{})
	alice = e.principal("acme", "alice", []string{"user"})
	auditor = e.principal("acme", "audrey", []string{"auditor"})
	req := BatchRequest{}
	for i := range n {
		req.Items = append(req.Items, MemoryRequest{Namespace: "n", Class: "episode", Body: fmt.Sprintf("entry %d", i), Channel: "user"})
	}
	want(t, e.do(alice, "POST", "/v1/memories/batch", req), 200, "")
	if _, err := e.svc.Checkpoint(e.ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	return e, alice, auditor
}

// openTileCheckpoint fetches acme's published checkpoint without a token and
// opens it with the published verifier key.
func openTileCheckpoint(t *testing.T, e *env) tlog.Tree {
	t.Helper()
	r := e.do("", "GET", e.logPrefix("acme")+"/checkpoint", nil)
	want(t, r, 200, "")
	if got := r.header.Get("Cache-Control"); got != "public, max-age=5" {
		t.Fatalf("checkpoint Cache-Control %q", got)
	}
	vkey := e.do("", "GET", "/v1/log/key?tenant=acme", nil)
	want(t, vkey, 200, "")
	v, err := note.NewVerifier(string(bytes.TrimSpace(vkey.body)))
	if err != nil {
		t.Fatal(err)
	}
	n, err := note.Open(r.body, note.VerifierList(v))
	if err != nil {
		t.Fatalf("the anonymous checkpoint does not verify with GET /v1/log/key: %v\n%s", err, r.body)
	}
	cp, err := torchwood.ParseCheckpoint(n.Text)
	if err != nil {
		t.Fatal(err)
	}
	return cp.Tree
}

// leafHashes are the leaf hashes of [0, n) as GET /v1/log/entries shows
// them (to anyone, redacted or not).
func leafHashes(t *testing.T, e *env, token string, n int64) []tlog.Hash {
	t.Helper()
	var out []tlog.Hash
	for start := int64(0); start < n; start += 1000 {
		r := e.do(token, "GET", fmt.Sprintf("/v1/log/entries?start=%d&end=%d", start, min(n, start+1000)), nil)
		want(t, r, 200, "")
		var page LogEntriesResponse
		if err := json.Unmarshal(r.body, &page); err != nil {
			t.Fatal(err)
		}
		for _, le := range page.Entries {
			h, err := le.Hash()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, tlog.Hash(h))
		}
	}
	if int64(len(out)) != n {
		t.Fatalf("%d leaf hashes, want %d", len(out), n)
	}
	return out
}

// TestTilesProveRecordsAndTrees fetches hash tiles anonymously and proves
// every leaf's inclusion, and the consistency of an older tree with the
// newer, with golang.org/x/mod/sumdb/tlog, whose TileHashReader also checks
// every tile it reads against the checkpoint's root.
func TestTilesProveRecordsAndTrees(t *testing.T) {
	e, alice, _ := tileFixture(t, 300)
	old := openTileCheckpoint(t, e)
	if old.N <= 256 {
		t.Fatalf("the log has %d leaves, want more than a full tile", old.N)
	}
	req := BatchRequest{Items: []MemoryRequest{{Namespace: "n", Class: "episode", Body: "later", Channel: "user"}}}
	want(t, e.do(alice, "POST", "/v1/memories/batch", req), 200, "")
	if _, err := e.svc.Checkpoint(e.ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	tree := openTileCheckpoint(t, e)
	if tree.N <= old.N {
		t.Fatalf("the checkpoint did not move: %d then %d", old.N, tree.N)
	}

	fetcher, err := torchwood.NewTileFetcher(e.srv.URL + e.logPrefix("acme"))
	if err != nil {
		t.Fatal(err)
	}
	hr := torchwood.TileHashReaderWithContext(context.Background(), tree, fetcher)
	hashes := leafHashes(t, e, alice, tree.N)
	for i, h := range hashes {
		p, err := tlog.ProveRecord(tree.N, int64(i), hr)
		if err != nil {
			t.Fatalf("ProveRecord %d: %v", i, err)
		}
		if err := tlog.CheckRecord(p, tree.N, tree.Hash, int64(i), h); err != nil {
			t.Fatalf("leaf %d does not prove from the tiles: %v", i, err)
		}
	}
	// A wrong leaf hash does not prove: the check can fail.
	p, err := tlog.ProveRecord(tree.N, 3, hr)
	if err != nil {
		t.Fatal(err)
	}
	if err := tlog.CheckRecord(p, tree.N, tree.Hash, 3, hashes[4]); err == nil {
		t.Fatal("leaf 4's hash proves as leaf 3")
	}
	tp, err := tlog.ProveTree(tree.N, old.N, hr)
	if err != nil {
		t.Fatalf("ProveTree: %v", err)
	}
	if err := tlog.CheckTree(tp, tree.N, tree.Hash, old.N, old.Hash); err != nil {
		t.Fatalf("the older checkpoint is not a prefix of the newer one by the tiles: %v", err)
	}
}

// TestTilesEntriesWithTorchwoodClient walks the whole log with torchwood's
// tile client, which checks every entry bundle against the hash tiles,
// as the tenant's auditor; and pins who else may not read the bundles.
func TestTilesEntriesWithTorchwoodClient(t *testing.T) {
	e, alice, auditor := tileFixture(t, 300)
	tree := openTileCheckpoint(t, e)
	fetcher, err := torchwood.NewTileFetcher(e.srv.URL+e.logPrefix("acme"),
		torchwood.WithHTTPClient(&http.Client{Transport: bearerTransport{auditor}}))
	if err != nil {
		t.Fatal(err)
	}
	client, err := torchwood.NewClient(fetcher)
	if err != nil {
		t.Fatal(err)
	}
	hashes := leafHashes(t, e, auditor, tree.N)
	// Entries stops before a trailing partial bundle; called again from
	// there, it reads it.
	var n int64
	for pass := 0; n < tree.N && pass <= int(tree.N/256)+1; pass++ {
		for i, entry := range client.Entries(context.Background(), tree, n) {
			if i != n {
				t.Fatalf("entry %d came as %d", n, i)
			}
			if tlog.RecordHash(entry) != hashes[i] {
				t.Fatalf("entry %d of the bundles is not leaf %d", i, i)
			}
			n++
		}
		if err := client.Err(); err != nil {
			t.Fatalf("torchwood client: %v", err)
		}
	}
	if n != tree.N {
		t.Fatalf("the client read %d entries of %d", n, tree.N)
	}

	other := e.principal("globex", "gus", []string{"auditor"})
	for _, c := range []struct {
		name, token string
		status      int
	}{
		{"anonymous", "", 401},
		{"a user of the tenant", alice, 403},
		{"an auditor of another tenant", other, 403},
		{"the tenant's auditor", auditor, 200},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.send(t, c.token, "GET", e.logPrefix("acme")+"/tile/entries/000", nil)
			want(t, r, c.status, "")
			if c.status != 200 && bytes.Contains(r.body, []byte("alice")) {
				t.Fatalf("a refused bundle leaks its leaves: %s", r.body)
			}
			if c.status == 200 && !bytes.Contains(r.body, []byte("alice")) {
				t.Fatalf("the bundle does not hold the leaves: %q", r.body[:64])
			}
		})
	}
}

// TestTilesPathsAndCaching pins the URL encoding, the status of tiles that
// do not exist (yet) and the cache lifetimes.
func TestTilesPathsAndCaching(t *testing.T) {
	e, _, auditor := tileFixture(t, 300)
	tree := openTileCheckpoint(t, e)
	w := tree.N - 256 // leaves in level-0 tile 1
	for _, c := range []struct {
		path   string
		status int
		cache  string
		size   int
	}{
		{e.logPrefix("acme") + "/tile/0/000", 200, "public, max-age=31536000, immutable", 256 * 32},
		{fmt.Sprintf(e.logPrefix("acme")+"/tile/0/001.p/%d", w), 200, "public, max-age=10", int(w) * 32},
		{e.logPrefix("acme") + "/tile/0/001.p/1", 200, "public, max-age=10", 32},
		{e.logPrefix("acme") + "/tile/1/000.p/1", 200, "public, max-age=10", 32},
		{e.logPrefix("acme") + "/tile/0/001", 404, "no-store", -1},                      // not full yet
		{fmt.Sprintf(e.logPrefix("acme")+"/tile/0/001.p/%d", w+1), 404, "no-store", -1}, // wider than the tree
		{e.logPrefix("acme") + "/tile/0/x001/000", 404, "no-store", -1},                 // index 1000
		{e.logPrefix("acme") + "/tile/0/1", 400, "no-store", -1},                        // not three digits
		{e.logPrefix("acme") + "/tile/0/000.p/256", 400, "no-store", -1},                // a full width is no partial
		{e.logPrefix("acme") + "/tile/zz/000", 400, "no-store", -1},
	} {
		t.Run(c.path, func(t *testing.T) {
			r := e.send(t, "", "GET", c.path, nil)
			want(t, r, c.status, "")
			if got := r.header.Get("Cache-Control"); got != c.cache {
				t.Fatalf("Cache-Control %q, want %q", got, c.cache)
			}
			if c.size >= 0 && len(r.body) != c.size {
				t.Fatalf("%d bytes, want %d", len(r.body), c.size)
			}
		})
	}
	// The first hash of tile 0/000 is leaf 0's hash.
	r := e.do("", "GET", e.logPrefix("acme")+"/tile/0/000", nil)
	if got, want := base64.StdEncoding.EncodeToString(r.body[:32]), leafHashes(t, e, auditor, 1); got != want[0].String() {
		t.Fatalf("tile 0/000 starts with %s, want leaf 0's hash %s", got, want[0])
	}
}

// TestEntryBundlesGzipAndCaching: an entry bundle is gzip-compressed for
// a client that accepts gzip (and only then), decompresses to the very
// bundle served plainly, and a full bundle is cached as immutable (by the
// caller only), a partial one briefly.
func TestEntryBundlesGzipAndCaching(t *testing.T) {
	e, _, auditor := tileFixture(t, 300)
	tree := openTileCheckpoint(t, e)
	get := func(path, acceptEncoding string) *http.Response {
		req, err := http.NewRequest("GET", e.srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+auditor)
		if acceptEncoding != "" {
			req.Header.Set("Accept-Encoding", acceptEncoding)
		}
		// A transport that leaves the encoding to us.
		res, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { res.Body.Close() })
		return res
	}
	read := func(res *http.Response) []byte {
		b, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	partial := fmt.Sprintf(e.logPrefix("acme")+"/tile/entries/001.p/%d", tree.N-256)
	for _, c := range []struct {
		path, cache string
	}{
		{e.logPrefix("acme") + "/tile/entries/000", "private, max-age=31536000, immutable"},
		{partial, "private, max-age=10"},
	} {
		t.Run(c.path, func(t *testing.T) {
			plainRes := get(c.path, "identity")
			plain := read(plainRes)
			if plainRes.StatusCode != 200 || plainRes.Header.Get("Content-Encoding") != "" || !bytes.Contains(plain, []byte("alice")) {
				t.Fatalf("identity: %d, Content-Encoding %q", plainRes.StatusCode, plainRes.Header.Get("Content-Encoding"))
			}
			for _, ae := range []string{"gzip", "gzip, identity", "br;q=1.0, gzip;q=0.5", "*"} {
				res := get(c.path, ae)
				if res.StatusCode != 200 || res.Header.Get("Content-Encoding") != "gzip" {
					t.Fatalf("Accept-Encoding %q: %d, Content-Encoding %q; want gzip", ae, res.StatusCode, res.Header.Get("Content-Encoding"))
				}
				zr, err := gzip.NewReader(res.Body)
				if err != nil {
					t.Fatal(err)
				}
				got, err := io.ReadAll(zr)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, plain) {
					t.Fatalf("Accept-Encoding %q: the gzipped bundle is not the plain one", ae)
				}
				if got, want := res.Header.Get("Cache-Control"), c.cache; got != want {
					t.Fatalf("Cache-Control %q, want %q", got, want)
				}
				if res.Header.Get("Vary") != "Accept-Encoding" {
					t.Fatalf("Vary %q", res.Header.Get("Vary"))
				}
			}
			if res := get(c.path, "gzip;q=0, identity"); res.Header.Get("Content-Encoding") != "" {
				t.Fatalf("gzip;q=0 answered %q", res.Header.Get("Content-Encoding"))
			}
			if res := get(c.path, ""); res.Header.Get("Content-Encoding") != "" {
				t.Fatalf("no Accept-Encoding answered %q", res.Header.Get("Content-Encoding"))
			}
		})
	}
	// Hash tiles are not compressed.
	req, _ := http.NewRequest("GET", e.srv.URL+e.logPrefix("acme")+"/tile/0/000", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	res, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.Header.Get("Content-Encoding") != "" {
		t.Fatalf("a hash tile came %q", res.Header.Get("Content-Encoding"))
	}
}

// logPrefix is where tenant's log is published: /log/ and its ID.
func (e *env) logPrefix(tenant string) string { return TilesPrefix + e.svc.LogIDs().ID(tenant) }

// TestTilesDoNotNameTenants: the published logs do not tell an anonymous
// client which tenants exist. A log is served under an ID that is not the
// tenant's name; its name, an ID no log has, and the ID of a tenant with
// no log yet all answer alike, for the checkpoint, the tiles and the
// bundles; a malformed tile path is the same 400 under any ID. The
// auditor learns the log's path from GET /v1/log/status, and the log
// there is the tenant's (its checkpoint opens with the tenant's key).
func TestTilesDoNotNameTenants(t *testing.T) {
	e, alice, auditor := tileFixture(t, 3)
	e.principal("globex", "gus", []string{"auditor"})
	known := e.logPrefix("acme")
	if strings.Contains(known, "acme") || len(known) != len(TilesPrefix)+custody.LogIDLen {
		t.Fatalf("acme's log is published under %q", known)
	}
	if other := e.logPrefix("globex"); other == known {
		t.Fatal("two tenants' logs under one ID")
	}
	var st LogStatusResponse
	r := e.do(auditor, "GET", "/v1/log/status", nil)
	want(t, r, 200, "")
	if err := json.Unmarshal(r.body, &st); err != nil {
		t.Fatal(err)
	}
	if st.LogPrefix != known {
		t.Fatalf("GET /v1/log/status gives the log prefix %q, want %q", st.LogPrefix, known)
	}
	openTileCheckpoint(t, e) // the log under that prefix opens with acme's key

	// Names and IDs of no log (a tenant has a log from its first
	// principal on, so a tenant without one is a tenant that does not
	// exist):
	unknownIDs := []string{
		"/log/acme",    // the tenant's name
		"/log/globexx", // a name that is no tenant's
		TilesPrefix + strings.Repeat("a", custody.LogIDLen), // an ID of no log
		TilesPrefix + e.svc.LogIDs().ID("initech"),          // the ID a tenant without a log would have
	}
	ref := e.do("", "GET", unknownIDs[2]+"/checkpoint", nil)
	want(t, ref, 404, "not_found")
	for _, p := range unknownIDs {
		for _, path := range []string{p + "/checkpoint", p + "/tile/0/000.p/1", p + "/tile/1/000.p/1"} {
			r := e.do("", "GET", path, nil)
			if r.status != ref.status || !bytes.Equal(r.body, ref.body) {
				t.Fatalf("GET %s = %d %s; want the answer of an unknown ID, %d %s", path, r.status, r.body, ref.status, ref.body)
			}
		}
		if r, k := e.do("", "GET", p+"/tile/0/1", nil), e.do("", "GET", known+"/tile/0/1", nil); r.status != 400 || k.status != 400 ||
			!bytes.Equal(bytes.ReplaceAll(r.body, []byte(p), nil), bytes.ReplaceAll(k.body, []byte(known), nil)) {
			t.Fatalf("a malformed path under %s = %d %s, under the log's = %d %s; want the same 400", p, r.status, r.body, k.status, k.body)
		}
		// Bundles: the same 403 to a caller who is not the tenant's auditor.
		r, k := e.do(alice, "GET", p+"/tile/entries/000.p/1", nil), e.do(alice, "GET", known+"/tile/entries/000.p/1", nil)
		if r.status != 403 || k.status != 403 || !bytes.Equal(r.body, k.body) {
			t.Fatalf("a user's bundle under %s = %d %s, under the log's = %d %s; want the same 403", p, r.status, r.body, k.status, k.body)
		}
	}
	// The legitimate reads under the log's ID.
	want(t, e.do("", "GET", known+"/checkpoint", nil), 200, "")
	want(t, e.do("", "GET", known+"/tile/0/000.p/1", nil), 200, "")
	want(t, e.do(auditor, "GET", known+"/tile/entries/000.p/1", nil), 200, "")
}
