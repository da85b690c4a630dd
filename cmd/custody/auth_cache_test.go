package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/tlog"
)

// TestOfflineRevokeReachesAWarmServer: custody principal revoke --db, run
// while a server on the same store has the principal in its
// authentication cache, is seen by that server on the principal's very
// next request; the principal nobody revoked is still served by the cache.
func TestOfflineRevokeReachesAWarmServer(t *testing.T) {
	db := filepath.Join(t.TempDir(), "c.db")
	add := func(name string) string {
		code, tok, msg := cli("principal", "add", "--db", db, "--tenant", "acme", "--name", name, "--role", "user")
		if code != 0 {
			t.Fatalf("principal add %s: %d %s", name, code, msg)
		}
		return strings.TrimSpace(tok)
	}
	alice, bob := add("alice"), add("bob")
	ctx := context.Background()
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	key, _, err := tlog.LoadOrCreateServerKey(db + ".key")
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
	if code, _, msg := cli("principal", "revoke", "alice", "--db", db, "--tenant", "acme"); code != 0 {
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
}
