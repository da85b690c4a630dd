package custody_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/tlog"
)

// env is a service over a real SQLite file with a settable clock.
type env struct {
	t     testing.TB
	ctx   context.Context
	store *sqlite.Store
	svc   *custody.Service
	now   time.Time
}

func newEnv(t *testing.T, opts custody.Options) *env {
	t.Helper()
	return newEnvAt(t, t.TempDir(), opts)
}

// newEnvAt is newEnv over the store and key in dir (created if absent).
func newEnvAt(t testing.TB, dir string, opts custody.Options) *env {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "custody.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	key, _, err := tlog.LoadOrCreateServerKey(filepath.Join(dir, "server.key"))
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, ctx: ctx, store: st, now: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)}
	opts.Now = func() time.Time { return e.now }
	if e.svc, err = custody.New(st, key, opts); err != nil {
		t.Fatal(err)
	}
	return e
}

// principal creates a principal and returns a caller acting for subject
// ("" = itself).
func (e *env) principal(tenant, name string, roles, channels, groups []string) *custody.Principal {
	e.t.Helper()
	p, _, err := e.svc.AddPrincipal(e.ctx, custody.PrincipalInput{Tenant: tenant, Name: name, Roles: roles, Channels: channels, Groups: groups})
	if err != nil {
		e.t.Fatalf("add principal %s/%s: %v", tenant, name, err)
	}
	return p
}

func (e *env) act(p *custody.Principal, subject string) *custody.Caller {
	e.t.Helper()
	c, err := e.svc.Act(e.ctx, p, subject)
	if err != nil {
		e.t.Fatalf("act %s for %q: %v", p.ID(), subject, err)
	}
	return c
}

func (e *env) remember(c *custody.Caller, in custody.Candidate) *custody.Decision {
	e.t.Helper()
	d, err := e.svc.Remember(e.ctx, c, in)
	if err != nil {
		e.t.Fatalf("remember %+v: %v", in, err)
	}
	return d
}

// bodies lists the bodies a caller can retrieve by list and by search.
func (e *env) listBodies(c *custody.Caller, ns string) []string {
	e.t.Helper()
	p, err := e.svc.List(e.ctx, c, custody.ListInput{Namespace: ns})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, r := range p.Items {
		out = append(out, r.Body)
	}
	return out
}

func (e *env) searchBodies(c *custody.Caller, q string) []string {
	e.t.Helper()
	hits, err := e.svc.Search(e.ctx, c, custody.SearchInput{Query: q})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, h := range hits {
		out = append(out, h.Body)
	}
	return out
}

// reopen opens another service on the store file at path with e's key.
func reopen(t *testing.T, e *env, path string) *env {
	t.Helper()
	st, err := sqlite.Open(e.ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e2 := &env{t: t, ctx: e.ctx, store: st, now: e.now}
	if e2.svc, err = custody.New(st, e.svc.ServerKey(), custody.Options{Now: func() time.Time { return e2.now }}); err != nil {
		t.Fatal(err)
	}
	return e2
}
