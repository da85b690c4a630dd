package postgres_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/httpapi"
)

// An HTTP write of a token the server has authenticated before is one
// round trip to the database: the principals version is checked in the
// write's own transaction. A change to the principals made through
// another server meanwhile is seen all the same: a token revoked there
// writes nothing and gets 401 (a request of it with a bad body too, not
// its 400), while a write whose principal is untouched by the change
// (another principal added) is authenticated again and applied.
func TestHTTPWriteChecksPrincipalsInItsRoundTrip(t *testing.T) {
	ctx := t.Context()
	dsn := newDatabase(t)
	service := keyedServices(t)
	a, calls := openCounted(t, dsn)
	b := openDSN(t, dsn)
	sa, sb := service(a), service(b)
	_, alice, err := sa.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: "alice", Roles: []string{"user"}})
	if err != nil {
		t.Fatal(err)
	}
	_, bob, err := sa.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: "bob", Roles: []string{"user"}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.New(sa, httpapi.Options{RatePerSecond: -1, Logger: slog.New(slog.DiscardHandler)}).Handler())
	t.Cleanup(srv.Close)
	post := func(tok string, body any) (int, string) {
		t.Helper()
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", srv.URL+"/v1/memories", bytes.NewReader(raw))
		req.Header.Set("Authorization", "Bearer "+tok)
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		out, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(out)
	}
	note := func(body string) map[string]any {
		return map[string]any{"namespace": "n", "class": "fact", "body": body, "channel": "user"}
	}
	for _, tok := range []string{alice, bob, alice} { // tokens kept, the tenant's state and statements learned
		if code, out := post(tok, note("warming up")); code != 201 {
			t.Fatalf("warm-up write: %d %s", code, out)
		}
	}
	before := calls.n.Load()
	if code, out := post(alice, note("one round trip")); code != 201 {
		t.Fatalf("write: %d %s", code, out)
	}
	if got := calls.n.Load() - before; got != 1 {
		t.Fatalf("an HTTP write took %d round trips to the database, want 1", got)
	}

	// Another principal added through the other server: bob is untouched,
	// authenticated again, and his write applied.
	_, carol, err := sb.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: "carol", Roles: []string{"user"}})
	if err != nil {
		t.Fatal(err)
	}
	missed := a.AheadStats().Missed
	if code, out := post(bob, note("after carol was added")); code != 201 {
		t.Fatalf("bob's write after another principal was added: %d %s", code, out)
	}
	if a.AheadStats().Missed != missed+1 {
		t.Fatal("the change to the principals was not seen by the check in the write's round trip")
	}
	count := func() int {
		t.Helper()
		var n int
		if err := a.Pool().QueryRow(ctx, `SELECT count(*) FROM records`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	revoke := func(name string) {
		t.Helper()
		if _, err := sb.RevokePrincipal(ctx, custody.PrincipalAdmin{Tenant: "acme", By: "operator"}, name, "stolen laptop"); err != nil {
			t.Fatal(err)
		}
	}
	keep := func(toks ...string) { // kept under the version now
		t.Helper()
		for _, tok := range toks {
			if code, out := post(tok, note("kept again")); code != 201 {
				t.Fatalf("write: %d %s", code, out)
			}
		}
	}
	bad := map[string]any{"namespace": "n", "class": "fact", "body": "", "channel": "user"}

	// bob revoked through the other server: his request with a bad body,
	// which never reaches the store, gets 401 rather than its 400.
	keep(alice, bob, carol)
	revoke("bob")
	if code, out := post(bob, bad); code != 401 {
		t.Fatalf("a bad request of a token revoked through another server: %d %s, want 401", code, out)
	}
	// alice revoked: her write is refused by the check in its round trip
	// and writes nothing.
	keep(alice, carol)
	n := count()
	revoke("alice")
	missed = a.AheadStats().Missed
	if code, out := post(alice, note("after the revocation")); code != 401 {
		t.Fatalf("a write of a token revoked through another server: %d %s, want 401", code, out)
	}
	if a.AheadStats().Missed != missed+1 {
		t.Fatal("the revoked token's write was not refused by the check in its round trip")
	}
	if got := count(); got != n {
		t.Fatalf("%d records written by a revoked token", got-n)
	}
	// carol, kept under the version before alice's revocation, untouched
	// by it: her write and her bad request are answered as they are.
	if code, out := post(carol, note("carol writes")); code != 201 {
		t.Fatalf("carol's write: %d %s", code, out)
	}
	keep(carol)
	if code, out := post(carol, bad); code != 400 {
		t.Fatalf("carol's bad request: %d %s, want 400", code, out)
	}

	// erin's channels narrowed, then widened again, through the other
	// server: each write is decided with her rights as they are now.
	_, erin, err := sa.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: "erin", Roles: []string{"user"}, Channels: []string{"user", "tool:web"}})
	if err != nil {
		t.Fatal(err)
	}
	onWeb := map[string]any{"namespace": "n", "class": "fact", "body": "read on the web", "channel": "tool:web"}
	channels := func(chs ...string) {
		t.Helper()
		if _, err := sb.UpdatePrincipal(ctx, custody.PrincipalAdmin{Tenant: "acme", By: "operator"}, "erin", custody.PrincipalChange{Channels: chs, Reason: "a test"}); err != nil {
			t.Fatal(err)
		}
	}
	keep(erin)
	channels("user")
	if code, out := post(erin, onWeb); code != 403 {
		t.Fatalf("a write on a channel taken from erin through the other server: %d %s, want 403", code, out)
	}
	keep(erin)
	channels("user", "tool:web")
	if code, out := post(erin, onWeb); code != 201 && code != 202 {
		t.Fatalf("a write on a channel given back to erin through the other server: %d %s, want it written", code, out)
	}
	expectVerify(t, sa, "")
}
