package custody_test

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/tlog"
)

// plainStore hides the store's principals version: a service over it reads
// and checks the principal on every authentication, as before the cache.
type plainStore struct{ custody.Store }

// BenchmarkAuthenticate measures one bearer-token authentication on SQLite
// with the principal cache (a version read) and without it (the principal
// looked up by its token and compared with its log entry).
func BenchmarkAuthenticate(b *testing.B) {
	dir := b.TempDir()
	e := newEnvAt(b, dir, custody.Options{})
	_, token, err := e.svc.AddPrincipal(e.ctx, custody.PrincipalInput{Tenant: "acme", Name: "alice", Roles: []string{"user"}})
	if err != nil {
		b.Fatal(err)
	}
	key, _, err := tlog.LoadOrCreateServerKey(filepath.Join(dir, "server.key"))
	if err != nil {
		b.Fatal(err)
	}
	plain, err := custody.New(plainStore{e.store}, key, custody.Options{})
	if err != nil {
		b.Fatal(err)
	}
	alice := e.act(mustPrincipal(b, e, "acme", "alice"), "")
	for _, c := range []struct {
		name string
		svc  *custody.Service
	}{{"cached", e.svc}, {"uncached", plain}} {
		b.Run(c.name, func(b *testing.B) {
			timed(b, func(int) error {
				_, err := c.svc.Authenticate(e.ctx, token)
				return err
			})
		})
		// As on a server that writes: every authentication follows a
		// commit (its own write, untimed), which a read that maps the file
		// pays for.
		b.Run(c.name+"AfterWrite", func(b *testing.B) {
			ds := make([]time.Duration, 0, b.N)
			for i := range b.N {
				if _, err := e.svc.Remember(e.ctx, alice, custody.Candidate{Namespace: "n", Class: "episode", Body: body(i), Channel: "user"}); err != nil {
					b.Fatal(err)
				}
				t0 := time.Now()
				if _, err := c.svc.Authenticate(e.ctx, token); err != nil {
					b.Fatal(err)
				}
				ds = append(ds, time.Since(t0))
			}
			slices.Sort(ds)
			b.ReportMetric(float64(ds[len(ds)/2].Microseconds()), "auth-p50-µs")
			b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds()), "auth-p99-µs")
		})
	}
}
