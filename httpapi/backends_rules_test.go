package httpapi

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/custody-mem/custody"
	"github.com/custody-mem/custody/postgres"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/tlog"
)

// backend opens fresh, empty stores of one kind for the tests of the
// retrieval, review, subject and restore rules, which run on every backend:
// SQLite always, PostgreSQL when CUSTODY_TEST_POSTGRES names a server where
// the tests may create databases.
type backend struct {
	name string
	// open returns a fresh store, closed when t ends, and a function that
	// runs raw SQL on its database (an insider's edit).
	open func(t *testing.T) (custody.Store, func(t testing.TB, query string))
}

func backends(t *testing.T) []backend {
	bs := []backend{{name: "sqlite", open: func(t *testing.T) (custody.Store, func(testing.TB, string)) {
		st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "c.db"))
		if err != nil {
			t.Fatalf("sqlite.Open: %v", err)
		}
		t.Cleanup(func() { st.Close() })
		return st, func(t testing.TB, q string) {
			t.Helper()
			if _, err := st.DB().Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}}}
	if os.Getenv("CUSTODY_TEST_POSTGRES") != "" {
		bs = append(bs, backend{name: "postgres", open: openPostgres})
	}
	return bs
}

// openPostgres creates a database for one test, drops it when the test
// ends, and opens a store on it.
func openPostgres(t *testing.T) (custody.Store, func(testing.TB, string)) {
	dsn := postgresDB(t)
	st, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		t.Fatalf("postgres.Open: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st, func(t testing.TB, q string) {
		t.Helper()
		if _, err := st.Pool().Exec(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// newEnvOn is newEnv over store st with server key key (a fresh key when
// nil) and service options opts. env.store is set only for SQLite.
func newEnvOn(t *testing.T, st custody.Store, key *tlog.ServerKey, opts custody.Options) *env {
	t.Helper()
	if key == nil {
		var err error
		if key, _, err = tlog.LoadOrCreateServerKey(filepath.Join(t.TempDir(), "server.key")); err != nil {
			t.Fatalf("LoadOrCreateServerKey: %v", err)
		}
	}
	svc, err := custody.New(st, key, opts)
	if err != nil {
		t.Fatalf("custody.New: %v", err)
	}
	api := New(svc, Options{Logger: slog.New(slog.DiscardHandler)})
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	e := &env{t: t, ctx: context.Background(), svc: svc, api: api, srv: srv}
	e.store, _ = st.(*sqlite.Store)
	return e
}

// eachBackend runs fn as a subtest on a fresh server over each backend.
func eachBackend(t *testing.T, fn func(t *testing.T, e *env, raw func(testing.TB, string), b backend)) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			st, raw := b.open(t)
			fn(t, newEnvOn(t, st, nil, custody.Options{}), raw, b)
		})
	}
}
