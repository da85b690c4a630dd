package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custody-mem/custody"
	"github.com/custody-mem/custody/postgres"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/tlog"
	"github.com/jackc/pgx/v5"
)

// twoHandles opens two stores on one fresh database of the backend: two
// servers, or a server and the offline CLI, sharing a store.
func twoHandles(t *testing.T, b backend) (custody.Store, custody.Store) {
	t.Helper()
	if b.name == "sqlite" {
		path := filepath.Join(t.TempDir(), "c.db")
		open := func() custody.Store {
			st, err := sqlite.Open(t.Context(), path)
			if err != nil {
				t.Fatalf("sqlite.Open: %v", err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		}
		return open(), open()
	}
	dsn := postgresDB(t)
	open := func() custody.Store {
		st, err := postgres.Open(context.Background(), dsn)
		if err != nil {
			t.Fatalf("postgres.Open: %v", err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	return open(), open()
}

// twoServices is a server (its env) and another service on the same
// store and key: a second server, or the offline CLI.
func twoServices(t *testing.T, b backend) (*env, *custody.Service) {
	t.Helper()
	st1, st2 := twoHandles(t, b)
	key, _, err := tlog.LoadOrCreateServerKey(filepath.Join(t.TempDir(), "server.key"))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvOn(t, st1, key, custody.Options{})
	other, err := custody.New(st2, key, custody.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return e, other
}

// postgresDB creates a database for one test in CUSTODY_TEST_POSTGRES,
// dropped when the test ends, and returns its DSN.
func postgresDB(t *testing.T) string {
	admin := os.Getenv("CUSTODY_TEST_POSTGRES")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("connecting to CUSTODY_TEST_POSTGRES: %v", err)
	}
	defer conn.Close(context.Background())
	var b [6]byte
	rand.Read(b[:])
	name := "custody_test_" + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("creating database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			t.Errorf("dropping database %s: %v", name, err)
			return
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("dropping database %s: %v", name, err)
		}
	})
	if strings.HasPrefix(admin, "postgres://") || strings.HasPrefix(admin, "postgresql://") {
		u, err := url.Parse(admin)
		if err != nil {
			t.Fatalf("CUSTODY_TEST_POSTGRES: %v", err)
		}
		u.Path = "/" + name
		return u.String()
	}
	return admin + " dbname=" + name
}

// cacheDelta counts the authentications the server's cache served and
// missed while fn ran.
func cacheDelta(e *env, fn func()) (hits, misses uint64) {
	before := e.svc.AuthCacheStats()
	fn()
	after := e.svc.AuthCacheStats()
	return after.Hits - before.Hits, after.Misses - before.Misses
}

// TestAuthCacheNeverDelaysAChange: a principal revoked, rotated or
// narrowed by another service on the same store (another server, or the
// offline CLI) is refused on its very next request to a server whose cache
// holds it; a principal nobody changed keeps working, served by the cache.
func TestAuthCacheNeverDelaysAChange(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			e, other := twoServices(t, b)
			e.principal("acme", "root", []string{"admin"})
			alice := e.principal("acme", "alice", []string{"user"})
			bob := e.principal("acme", "bob", []string{"user"})
			carol := e.principal("acme", "carol", []string{"user", "agent"}, "user", "agent")
			dave := e.principal("acme", "dave", []string{"user"})
			write := func(token, channel string) resp {
				return e.do(token, "POST", "/v1/memories", map[string]any{"namespace": "n", "class": "episode", "body": "seen on " + channel, "channel": channel})
			}
			// Warm: every token's second request is served by the cache.
			for _, tok := range []string{alice, bob, carol, dave} {
				want(t, e.do(tok, "GET", "/v1/memories", nil), 200, "")
				hits, misses := cacheDelta(e, func() { want(t, e.do(tok, "GET", "/v1/memories", nil), 200, "") })
				if hits != 1 || misses != 0 {
					t.Fatalf("a repeated request: %d hits, %d misses; want 1 hit", hits, misses)
				}
			}
			want(t, write(carol, "agent"), 201, "")

			admin := custody.PrincipalAdmin{Tenant: "acme", By: "acme/root"}
			if _, err := other.RevokePrincipal(e.ctx, admin, "alice", "left"); err != nil {
				t.Fatalf("revoke on the other service: %v", err)
			}
			want(t, e.do(alice, "GET", "/v1/memories", nil), 401, "")

			_, rotated, err := other.RotatePrincipal(e.ctx, admin, "bob", "lost")
			if err != nil {
				t.Fatalf("rotate on the other service: %v", err)
			}
			want(t, e.do(bob, "GET", "/v1/memories", nil), 401, "")
			want(t, e.do(rotated, "GET", "/v1/memories", nil), 200, "")

			if _, err := other.UpdatePrincipal(e.ctx, admin, "carol", custody.PrincipalChange{Channels: []string{"user"}}); err != nil {
				t.Fatalf("update on the other service: %v", err)
			}
			want(t, write(carol, "agent"), 403, "")
			want(t, write(carol, "user"), 201, "")

			// The twin: dave, whom nobody changed, keeps working; after the
			// changes the cache reads him once again, then serves him.
			hits, misses := cacheDelta(e, func() {
				want(t, write(dave, "user"), 201, "")
				want(t, e.do(dave, "GET", "/v1/memories", nil), 200, "")
			})
			if hits != 1 || misses != 1 {
				t.Fatalf("dave after the others' changes: %d hits, %d misses; want 1 miss (his write, the first request since the changes), then 1 hit", hits, misses)
			}
			s := e.svc.AuthCacheStats()
			m := e.do("", "GET", "/metrics", nil).String()
			for _, line := range []string{fmt.Sprintf(`custody_auth_cache_total{result="hit"} %d`, s.Hits), fmt.Sprintf(`custody_auth_cache_total{result="miss"} %d`, s.Misses)} {
				if !strings.Contains(m, line+"\n") {
					t.Errorf("/metrics lacks %q", line)
				}
			}
		})
	}
}

// TestSubjectCacheNeverDelaysARevocation: an agent acting for a user whom
// another service on the same store revokes is refused on its very next
// request; acting for a user nobody changed goes on, from the cache.
func TestSubjectCacheNeverDelaysARevocation(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			e, other := twoServices(t, b)
			e.principal("acme", "root", []string{"admin"})
			e.principal("acme", "erin", []string{"user"})
			e.principal("acme", "frank", []string{"user"})
			bot := e.principal("acme", "bot", []string{"agent"})
			write := func(subject string) resp {
				return e.do(bot, "POST", "/v1/memories", map[string]any{"subject": subject, "namespace": "n", "class": "episode", "body": "noted for " + subject, "channel": "agent"})
			}
			for _, u := range []string{"erin", "frank"} {
				want(t, write(u), 201, "")
				hits, misses := cacheDelta(e, func() { want(t, write(u), 201, "") })
				if hits != 2 || misses != 0 {
					t.Fatalf("a repeated write for %s: %d hits, %d misses; want 2 hits (the agent and its subject)", u, hits, misses)
				}
			}
			if _, err := other.RevokePrincipal(e.ctx, custody.PrincipalAdmin{Tenant: "acme", By: "acme/root"}, "erin", "left"); err != nil {
				t.Fatalf("revoke on the other service: %v", err)
			}
			want(t, write("erin"), 403, "")
			want(t, write("frank"), 201, "")
			hits, misses := cacheDelta(e, func() { want(t, write("frank"), 201, "") })
			if hits != 2 || misses != 0 {
				t.Fatalf("frank after erin's revocation: %d hits, %d misses; want 2 hits", hits, misses)
			}
		})
	}
}

// TestAuthCacheRevocationWithoutTheTrigger: with the trigger that moves the
// principals version dropped (SQLite) or disabled (PostgreSQL) by an
// insider, a revocation through custody on another service still reaches
// the warm server on the principal's next request; its twin, a principal
// nobody changed, still works.
func TestAuthCacheRevocationWithoutTheTrigger(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			e, other := twoServices(t, b)
			e.principal("acme", "root", []string{"admin"})
			alice := e.principal("acme", "alice", []string{"user"})
			bob := e.principal("acme", "bob", []string{"user"})
			for _, tok := range []string{alice, bob, alice, bob} {
				want(t, e.do(tok, "GET", "/v1/memories", nil), 200, "")
			}
			var err error
			switch st := other.Store().(type) {
			case *sqlite.Store:
				_, err = st.DB().Exec(`DROP TRIGGER principals_version_update`)
			case *postgres.Store:
				_, err = st.Pool().Exec(e.ctx, `ALTER TABLE principals DISABLE TRIGGER principals_version_change`)
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := other.RevokePrincipal(e.ctx, custody.PrincipalAdmin{Tenant: "acme", By: "acme/root"}, "alice", "left"); err != nil {
				t.Fatalf("revoke on the other service: %v", err)
			}
			want(t, e.do(alice, "GET", "/v1/memories", nil), 401, "")
			want(t, e.do(bob, "GET", "/v1/memories", nil), 200, "")
		})
	}
}
