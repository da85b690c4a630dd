package client_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-mem/custody"
	"github.com/custody-mem/custody/client"
	"github.com/custody-mem/custody/httpapi"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/tlog"
)

// server starts a real server over SQLite and returns its URL and a way to
// make principals.
func server(t *testing.T) (string, func(name string, roles []string, channels ...string) string) {
	t.Helper()
	return serverWith(t, httpapi.Options{})
}

// serverWith is server with the HTTP server's options (its Logger is
// set to discard).
func serverWith(t *testing.T, opts httpapi.Options) (string, func(name string, roles []string, channels ...string) string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	store, err := sqlite.Open(ctx, filepath.Join(dir, "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	key, _, err := tlog.LoadOrCreateServerKey(filepath.Join(dir, "server.key"))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := custody.New(store, key, custody.Options{})
	if err != nil {
		t.Fatal(err)
	}
	opts.Logger = slog.New(slog.DiscardHandler)
	srv := httptest.NewServer(httpapi.New(svc, opts).Handler())
	t.Cleanup(func() { srv.Close(); store.Close() })
	return srv.URL, func(name string, roles []string, channels ...string) string {
		_, tok, err := svc.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: name, Roles: roles, Channels: channels})
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
}

func TestClientRoundTrip(t *testing.T) {
	ctx := context.Background()
	url, principal := server(t)
	alice := client.New(url+"/", principal("alice", []string{"user"}))
	harness := client.New(url, principal("harness", []string{"agent"}, "agent", "tool:email"))
	rita := client.New(url, principal("rita", []string{"reviewer"}))

	if err := client.New(url, "").Health(ctx); err != nil {
		t.Fatalf("Health: %v", err)
	}
	d, err := alice.Remember(ctx, httpapi.MemoryRequest{Namespace: "profile", Key: "payee_account", Class: "fact", Body: "ACCT-1042", Channel: "user"})
	if err != nil || d.State != custody.StateAdmitted || d.Authority != custody.AuthorityUser {
		t.Fatalf("Remember = %+v, %v", d, err)
	}
	q, err := harness.Remember(ctx, httpapi.MemoryRequest{Namespace: "profile", Key: "payee_account", Class: "fact", Body: "ACCT-7777", Channel: "tool:email", Subject: "alice"})
	if err != nil || q.State != custody.StateQuarantined {
		t.Fatalf("Remember (email) = %+v, %v", q, err)
	}
	if r, err := alice.Get(ctx, d.ID, ""); err != nil || r.Body != "ACCT-1042" {
		t.Fatalf("Get = %+v, %v", r, err)
	}
	if page, err := harness.List(ctx, client.ListOptions{Namespace: "profile", Subject: "alice", Limit: 5}); err != nil || len(page.Items) != 1 {
		t.Fatalf("List = %+v, %v", page, err)
	}
	if hits, err := alice.Search(ctx, httpapi.SearchRequest{Query: "ACCT"}); err != nil || len(hits.Items) != 1 {
		t.Fatalf("Search = %+v, %v", hits, err)
	}
	if vs, err := alice.History(ctx, d.ID, ""); err != nil || len(vs) != 2 {
		t.Fatalf("History = %d versions, %v", len(vs), err)
	}
	if l, err := alice.Lineage(ctx, d.ID, ""); err != nil || l.Record.ID != d.ID {
		t.Fatalf("Lineage = %+v, %v", l, err)
	}
	queue, err := rita.ReviewQueue(ctx, "", "", 0)
	if err != nil || len(queue.Items) != 1 || queue.Items[0].Proposed == nil || *queue.Items[0].Proposed.Old != "ACCT-1042" {
		t.Fatalf("ReviewQueue = %+v, %v", queue, err)
	}
	if r, err := rita.Reject(ctx, q.ID, httpapi.RejectRequest{Reason: "phishing"}); err != nil || r.State != custody.StateRejected {
		t.Fatalf("Reject = %+v, %v", r, err)
	}
	if _, err := rita.Approve(ctx, q.ID, ""); !errors.Is(err, custody.ErrConflict) {
		t.Fatalf("Approve of a rejected record: %v, want conflict", err)
	}
	if ids, err := rita.Reevaluate(ctx, ""); err != nil || len(ids) != 0 {
		t.Fatalf("Reevaluate = %v, %v", ids, err)
	}
	over, err := alice.Remember(ctx, httpapi.MemoryRequest{Namespace: "profile", Key: "payee_account", Class: "fact", Body: "ACCT-2000", Channel: "user"})
	if err != nil || over.State != custody.StatePendingConfirmation {
		t.Fatalf("overwrite = %+v, %v", over, err)
	}
	if _, err := harness.Confirm(ctx, over.ID, "alice"); !errors.Is(err, custody.ErrNotFound) {
		t.Fatalf("agent Confirm: %v, want not found", err)
	}
	if r, err := alice.Confirm(ctx, over.ID, ""); err != nil || r.Authority != custody.AuthorityConfirmed {
		t.Fatalf("Confirm = %+v, %v", r, err)
	}
	sess, err := harness.OpenSession(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if s, err := harness.Observe(ctx, sess.ID, httpapi.ObservationRequest{Channel: "tool:email", Text: "pay ACCT-7777", Subject: "alice"}); err != nil || !s.External {
		t.Fatalf("Observe = %+v, %v", s, err)
	}
	g, err := harness.Gate(ctx, httpapi.GateRequest{Action: "payments.send", Args: map[string]any{"to": "ACCT-7777"}, Session: sess.ID, Subject: "alice"})
	if err != nil || g.Decision != custody.GateDeny {
		t.Fatalf("Gate = %+v, %v", g, err)
	}
	g, err = alice.Gate(ctx, httpapi.GateRequest{Action: "update_password", Args: map[string]any{}})
	if err != nil || g.Decision != custody.GateConfirm || g.ConfirmDigest == "" {
		t.Fatalf("Gate (unbacked) = %+v, %v", g, err)
	}
	if dg, err := alice.ConfirmAction(ctx, httpapi.GateConfirmRequest{Action: "update_password", Args: map[string]any{}}); err != nil || dg != g.ConfirmDigest {
		t.Fatalf("ConfirmAction = %q, %v; want %q", dg, err, g.ConfirmDigest)
	}
	if g, err := alice.Gate(ctx, httpapi.GateRequest{Action: "update_password", Args: map[string]any{}}); err != nil || g.Decision != custody.GateAllow {
		t.Fatalf("Gate after confirmation = %+v, %v", g, err)
	}
	if ids, err := rita.Quarantine(ctx, over.ID, httpapi.QuarantineRequest{Reason: "audit"}); err != nil || len(ids) != 1 {
		t.Fatalf("Quarantine = %v, %v", ids, err)
	}
	if _, err := rita.Rebuild(ctx, over.ID, httpapi.RebuildRequest{}); !errors.Is(err, custody.ErrConflict) {
		t.Fatalf("Rebuild of a quarantined record: %v, want conflict", err)
	}
	if ids, err := rita.Retire(ctx, over.ID, httpapi.RetireRequest{Erase: true}); err != nil || len(ids) != 1 {
		t.Fatalf("Retire = %v, %v", ids, err)
	}
	p, err := alice.Policy(ctx, "")
	if err != nil || p.Version == "" || p.Text == "" {
		t.Fatalf("Policy = %+v, %v", p, err)
	}
	if _, err := alice.SetPolicy(ctx, []byte(p.Text)); !errors.Is(err, custody.ErrForbidden) {
		t.Fatalf("SetPolicy as a user: %v, want forbidden", err)
	}
	note, err := alice.Checkpoint(ctx)
	if err != nil || !strings.HasPrefix(string(note), custody.DefaultLogOrigin+"/acme\n") {
		t.Fatalf("Checkpoint = %q, %v", note, err)
	}
	if es, err := alice.LogEntries(ctx, 0, 4); err != nil || len(es) != 4 {
		t.Fatalf("LogEntries = %d, %v", len(es), err)
	}
	if p, err := alice.InclusionProof(ctx, 1, 4); err != nil || len(p.Hashes) == 0 {
		t.Fatalf("InclusionProof = %+v, %v", p, err)
	}
	if p, err := alice.ConsistencyProof(ctx, 2, 4); err != nil || len(p.Hashes) == 0 {
		t.Fatalf("ConsistencyProof = %+v, %v", p, err)
	}
	owner := client.New(url, principal("paula", []string{"policy_owner"}))
	if r, err := owner.SetPolicy(ctx, []byte(p.Text)); err != nil || r.Version != p.Version {
		t.Fatalf("SetPolicy = %+v, %v", r, err)
	}
}

func TestClientErrors(t *testing.T) {
	ctx := context.Background()
	url, principal := server(t)
	alice := client.New(url, principal("alice", []string{"user"}))

	_, err := alice.Get(ctx, "01ARZ3NDEKTSV4RRFFQ69G5FAV", "")
	var e *client.Error
	if !errors.As(err, &e) || e.Status != 404 || e.Code != "not_found" || e.Message == "" || !errors.Is(err, custody.ErrNotFound) {
		t.Fatalf("Get of an absent id: %#v", err)
	}
	_, err = alice.Remember(ctx, httpapi.MemoryRequest{Namespace: "bad//ns", Class: "fact", Body: "x", Channel: "user"})
	if !errors.As(err, &e) || e.Status != 400 || e.Field != "namespace" || !errors.Is(err, custody.ErrInvalid) {
		t.Fatalf("bad namespace: %#v", err)
	}
	_, err = alice.Get(ctx, "01ARZ3NDEKTSV4RRFFQ69G5FAV", "bob")
	if !errors.Is(err, custody.ErrSubjectNotAllowed) {
		t.Fatalf("naming another subject: %v", err)
	}
	_, err = client.New(url, "cst_wrong").List(ctx, client.ListOptions{})
	if !errors.Is(err, custody.ErrUnauthenticated) || !client.IsStatus(err, 401) {
		t.Fatalf("wrong token: %v", err)
	}
	_, err = client.New("http://127.0.0.1:1", "x").List(ctx, client.ListOptions{})
	if err == nil || errors.As(err, &e) {
		t.Fatalf("unreachable server: %v", err)
	}
}
