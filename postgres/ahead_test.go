package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/postgres"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// callCounter counts what a pool sends as one message train and waits
// for: a statement, or a pipeline of them (pgx's tracers). Once a
// connection has prepared a statement, each is one round trip.
type callCounter struct{ n atomic.Int64 }

func (c *callCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}
func (c *callCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (c *callCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.n.Add(1)
	return ctx
}
func (c *callCounter) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (c *callCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// openCounted opens a store on dsn whose round trips are counted.
func openCounted(t *testing.T, dsn string) (*postgres.Store, *callCounter) {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	c := &callCounter{}
	cfg.ConnConfig.Tracer = c
	st, err := postgres.OpenConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, c
}

// A write of a tenant this server wrote last is one round trip: the
// lock, the checks of what the write was told, its inserts and the
// commit in one pipeline; with the batch run as before (its reads, then
// its inserts with the commit) it is two.
func TestWriteAloneIsOneRoundTrip(t *testing.T) {
	ctx := t.Context()
	st, calls := openCounted(t, newDatabase(t))
	svc := keyedServices(t)(st)
	alice := userOf(t, svc)
	remember := func(key, body string) *custody.Decision {
		t.Helper()
		d, err := svc.Remember(ctx, alice, custody.Candidate{Namespace: "notes", Key: key, Class: custody.ClassFact, Body: body, Channel: custody.ChannelUser})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for i := range 3 { // the tenant's state and the statements, learned
		remember(fmt.Sprintf("warm%d", i), "warming up")
	}
	count := func(key, body string, want int64) *custody.Decision {
		t.Helper()
		before := calls.n.Load()
		d := remember(key, body)
		if got := calls.n.Load() - before; got != want {
			t.Fatalf("writing %s took %d round trips, want %d", key, got, want)
		}
		return d
	}
	applied := st.AheadStats().Applied
	count("new", "a new key", 1)
	d := count("new", "the same key again", 1)
	if d.Record.Version != 2 || d.State != custody.StateAdmitted {
		t.Fatalf("the second version of the key is version %d, %s; want 2, admitted", d.Record.Version, d.State)
	}
	if got := st.AheadStats().Applied - applied; got != 2 {
		t.Fatalf("%d writes applied ahead, want 2", got)
	}

	postgres.SetAhead(st, false)
	count("other", "with its reads", 2)
	d = count("other", "with its reads again", 2)
	if d.Record.Version != 2 {
		t.Fatalf("the second version of the key is version %d, want 2", d.Record.Version)
	}
	expectVerify(t, svc, "")
}

// rejectFacts is a policy that rejects every fact and admits the rest.
var rejectFacts = []byte(`@id("reject-facts")
@outcome("reject")
forbid (principal, action == Action::"admit", resource) when { context.class == "fact" };
@id("all")
permit (principal, action == Action::"admit", resource);
`)

// A write the policy rejects runs ahead as well: its tombstone is held
// back with its inserts, in the one round trip. Its twin, admitted under
// the same policy, too.
func TestRejectedWriteIsOneRoundTrip(t *testing.T) {
	ctx := t.Context()
	st, calls := openCounted(t, newDatabase(t))
	svc := keyedServices(t)(st)
	alice := userOf(t, svc)
	p, _, err := svc.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: "owner", Roles: []string{"policy_owner"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.SetPolicy(ctx, &custody.Caller{Principal: p, Subject: p}, rejectFacts); err != nil {
		t.Fatal(err)
	}
	remember := func(class custody.Class, body string) (*custody.Decision, int64) {
		t.Helper()
		before := calls.n.Load()
		d, err := svc.Remember(ctx, alice, custody.Candidate{Namespace: "n", Class: class, Body: body, Channel: custody.ChannelUser})
		if err != nil {
			t.Fatal(err)
		}
		return d, calls.n.Load() - before
	}
	for range 3 {
		remember(custody.ClassEpisode, "warming up")
	}
	if d, n := remember(custody.ClassFact, "a fact the policy rejects"); d.State != custody.StateRejected || n != 1 {
		t.Fatalf("the rejected write: %s in %d round trips; want rejected, in 1", d.State, n)
	}
	if d, n := remember(custody.ClassEpisode, "an episode it admits"); d.State != custody.StateAdmitted || n != 1 {
		t.Fatalf("the admitted write: %s in %d round trips; want admitted, in 1", d.State, n)
	}
	expectVerify(t, svc, "")
}

// What another server changed meanwhile (a version of a key, an append
// to the log, a pause) fails the check of a write run ahead: nothing of it
// is written, and it is applied again on what the rows hold, its
// decision made on that.
func TestWriteAheadSeesAnotherServersWrites(t *testing.T) {
	ctx := t.Context()
	dsn := newDatabase(t)
	service := keyedServices(t)
	a, b := openDSN(t, dsn), openDSN(t, dsn)
	sa, sb := service(a), service(b)
	p, _, err := sa.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: "alice", Roles: []string{"user"}})
	if err != nil {
		t.Fatal(err)
	}
	alice := &custody.Caller{Principal: p, Subject: p}
	admin, _, err := sa.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: "root", Roles: []string{"admin"}})
	if err != nil {
		t.Fatal(err)
	}
	remember := func(svc *custody.Service, key, body string) *custody.Decision {
		t.Helper()
		d, err := svc.Remember(ctx, alice, custody.Candidate{Namespace: "notes", Key: key, Class: custody.ClassFact, Body: body, Channel: custody.ChannelUser})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	remember(sa, "x", "first")
	remember(sa, "y", "second")
	if a.AheadStats().Applied == 0 {
		t.Fatal("no write of a tenant the server wrote last was applied ahead")
	}
	remember(sb, "x", "written through the other server")
	missed := a.AheadStats().Missed
	d := remember(sa, "x", "third")
	if d.Record.Version != 3 || d.State != custody.StateAdmitted {
		t.Fatalf("after the other server's version 2, the key's new version is %d, %s; want 3, admitted", d.Record.Version, d.State)
	}
	if a.AheadStats().Missed != missed+1 {
		t.Fatal("the stale prediction was not caught by the check")
	}
	cur, err := sa.Get(ctx, alice, d.ID)
	if err != nil || cur.Body != "third" {
		t.Fatalf("the key's version in force: %v, %v", cur, err)
	}

	remember(sa, "z", "ahead again")
	ca := &custody.Caller{Principal: admin, Subject: admin}
	pause, err := sb.SetPause(ctx, ca, custody.PauseInput{Writer: p.Name, Reason: "checking a leak"})
	if err != nil {
		t.Fatal(err)
	}
	missed = a.AheadStats().Missed
	held := remember(sa, "w", "while paused on the other server")
	if held.State == custody.StateAdmitted {
		t.Fatalf("a write paused through the other server was %s (%s); want it held", held.State, held.Reason)
	}
	if a.AheadStats().Missed != missed+1 {
		t.Fatal("the pause was not caught by the check")
	}

	// A policy set through the other server: the write is decided on it.
	if _, err := sa.ResumePause(ctx, ca, pause.ID); err != nil {
		t.Fatal(err)
	}
	owner, _, err := sa.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: "owner", Roles: []string{"policy_owner"}})
	if err != nil {
		t.Fatal(err)
	}
	remember(sa, "v", "ahead once more")
	if _, _, err := sb.SetPolicy(ctx, &custody.Caller{Principal: owner, Subject: owner}, rejectFacts); err != nil {
		t.Fatal(err)
	}
	missed = a.AheadStats().Missed
	if d := remember(sa, "u", "a fact the other server's policy rejects"); d.State != custody.StateRejected {
		t.Fatalf("a fact written after the other server set a policy rejecting facts was %s (%s); want rejected", d.State, d.Reason)
	}
	if a.AheadStats().Missed != missed+1 {
		t.Fatal("the policy was not caught by the check")
	}

	// A policy row written outside the log (the log's size is as the
	// server left it): the digest catches it, and the write is decided on
	// the newest row's text, as a write that reads it is.
	remember(sa, "t", "an episode, ahead") // the state kept again
	mustExec(t, a, `INSERT INTO policies (tenant, text, actor, created_at) SELECT tenant, convert_to($1, 'UTF8'), actor, created_at FROM policies ORDER BY seq DESC LIMIT 1`,
		`@id("all")
permit (principal, action == Action::"admit", resource);
`)
	missed = a.AheadStats().Missed
	if d := remember(sa, "s", "a fact the row's policy admits"); d.State != custody.StateAdmitted {
		t.Fatalf("a fact written under a policy row admitting everything was %s (%s); want admitted", d.State, d.Reason)
	}
	if a.AheadStats().Missed != missed+1 {
		t.Fatal("the policy row was not caught by the check")
	}
	mustExec(t, a, `DELETE FROM policies WHERE seq = (SELECT max(seq) FROM policies)`)
	expectVerify(t, sa, "")
	expectVerify(t, sb, "")
}

// BenchmarkRememberAhead is a keyed write in process, its batch run ahead
// in one round trip and with its reads (the lock with its reads, then the
// inserts with the commit) in turn, write by write, so that both meet the
// same load; it reports the p50 of each:
//
//	go test ./postgres -run '^$' -bench RememberAhead -benchtime 2000x
func BenchmarkRememberAhead(b *testing.B) {
	st := openDSN(b, newDatabase(b))
	svc, p, _ := benchService(b, st, "writer")
	c := &custody.Caller{Principal: p, Subject: p}
	var lat [2][]time.Duration // with its reads, ahead
	for i := 0; b.Loop(); i++ {
		ahead := i%2 == 1
		postgres.SetAhead(st, ahead)
		t := time.Now()
		if _, err := svc.Remember(b.Context(), c, custody.Candidate{Namespace: "bench", Key: fmt.Sprintf("k%d", i), Class: custody.ClassFact,
			Body: fmt.Sprintf("benchmark memory number %d about invoices and payees", i), Channel: custody.ChannelUser}); err != nil {
			b.Fatal(err)
		}
		k := 0
		if ahead {
			k = 1
		}
		lat[k] = append(lat[k], time.Since(t))
	}
	for k, name := range []string{"reads", "ahead"} {
		if l := lat[k]; len(l) > 0 {
			slices.Sort(l)
			b.ReportMetric(float64(l[len(l)/2].Microseconds()), name+"-p50-µs")
		}
	}
}
