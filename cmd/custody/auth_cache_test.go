package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/postgres"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/tlog"
	"github.com/jackc/pgx/v5"
)

// TestOfflineRevokeReachesAWarmServer: custody principal revoke on the
// store (--db, or --postgres), run while a server on the same store has
// the principal in its authentication cache, is seen by that server on
// the principal's very next request; the principal nobody revoked is
// still served by the cache.
func TestOfflineRevokeReachesAWarmServer(t *testing.T) {
	type backend struct {
		name  string
		flags []string
		open  func() custody.Store
		key   string
	}
	db := filepath.Join(t.TempDir(), "c.db")
	bs := []backend{{name: "sqlite", flags: []string{"--db", db}, key: db + ".key", open: func() custody.Store {
		st, err := sqlite.Open(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}}}
	if os.Getenv("CUSTODY_TEST_POSTGRES") != "" {
		dsn, key := postgresDB(t), filepath.Join(t.TempDir(), "pg.key")
		bs = append(bs, backend{name: "postgres", flags: []string{"--postgres", dsn, "--key", key}, key: key, open: func() custody.Store {
			st, err := postgres.Open(context.Background(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			return st
		}})
	}
	for _, b := range bs {
		t.Run(b.name, func(t *testing.T) {
			cliOn := func(args ...string) (int, string, string) { return cli(append(args, b.flags...)...) }
			add := func(name string) string {
				code, tok, msg := cliOn("principal", "add", "--tenant", "acme", "--name", name, "--role", "user")
				if code != 0 {
					t.Fatalf("principal add %s: %d %s", name, code, msg)
				}
				return strings.TrimSpace(tok)
			}
			alice, bob := add("alice"), add("bob")
			ctx := context.Background()
			st := b.open()
			defer st.Close()
			key, _, err := tlog.LoadOrCreateServerKey(b.key)
			if err != nil {
				t.Fatal(err)
			}
			svc, err := custody.New(st, key, custody.Options{})
			if err != nil {
				t.Fatal(err)
			}
			auth := func(tok string) error { _, err := svc.Authenticate(ctx, tok); return err }
			for _, tok := range []string{alice, bob, alice, bob} {
				if err := auth(tok); err != nil {
					t.Fatalf("warming the cache: %v", err)
				}
			}
			if s := svc.AuthCacheStats(); s.Hits != 2 || s.Misses != 2 {
				t.Fatalf("cache after two requests each: %+v, want 2 hits and 2 misses", s)
			}
			if code, _, msg := cliOn("principal", "revoke", "alice", "--tenant", "acme"); code != 0 {
				t.Fatalf("principal revoke: %d %s", code, msg)
			}
			if err := auth(alice); !errors.Is(err, custody.ErrUnauthenticated) {
				t.Fatalf("alice's first request after the offline revoke: %v, want ErrUnauthenticated", err)
			}
			for range 2 {
				if err := auth(bob); err != nil {
					t.Fatalf("bob after alice's revocation: %v", err)
				}
			}
			if s := svc.AuthCacheStats(); s.Hits != 3 || s.Misses != 4 {
				t.Fatalf("cache after the revocation: %+v, want 3 hits and 4 misses (alice and bob read again once, then bob from the cache)", s)
			}
		})
	}
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
