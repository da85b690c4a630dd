package sqlite_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/storetest"
	"github.com/custody-mem/custody/tlog"
)

// A schema 8 database, whose principals keep no log index and whose oldest
// principal entry predates the token and sealed-key digests, is migrated
// at open: each principal is pointed at its latest entry, so it still
// authenticates and verify passes, naming the old principal's token hash
// and sealed key as not covered. A row the log never introduced stays
// unlinked and is refused. A later edit of the old principal's roles is
// still caught.
func TestMigratePrincipalLogIndex(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	path := filepath.Join(dir, "c.db")
	st, key, svc, _ := serviceAt(t, dir)
	_, bobToken, err := svc.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: "bob", Roles: []string{"user"}})
	if err != nil {
		t.Fatal(err)
	}
	// carol as an older custody logged her: no digests in her entry.
	carolToken, carolHash := custody.NewToken()
	pub, priv, err := tlog.GeneratePrincipalKey()
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := key.Seal(priv, []byte("acme/carol"))
	if err != nil {
		t.Fatal(err)
	}
	carol := &custody.Principal{Tenant: "acme", Name: "carol", Roles: []string{"user"}, Channels: []string{"user"}, PublicKey: pub, CreatedAt: storetest.Start}
	err = st.Update(ctx, func(tx custody.Tx) error {
		if err := tx.InsertPrincipal(ctx, carol, carolHash, sealed); err != nil {
			return err
		}
		e := &tlog.Entry{Tenant: "acme", Transition: custody.TransitionPrincipal, Actor: custody.ServerActor, Time: storetest.Start,
			Details: map[string]string{"name": "carol", "roles": "user", "channels": "user", "groups": "", "public_key": fmt.Sprintf("%x", []byte(pub))}}
		e.Sign(key.SigningKey())
		_, err := tx.AppendLeaf(ctx, "acme", e.Leaf())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// And a row nobody logged.
	eveToken, eveHash := custody.NewToken()
	st.Close()
	rewind(t, path, `ALTER TABLE principals DROP COLUMN log_index`, `PRAGMA user_version = 8`,
		fmt.Sprintf(`INSERT INTO principals (tenant, name, roles, channels, groups_, public_key, sealed_key, token_hash, created_at)
 SELECT tenant, 'eve', roles, channels, groups_, public_key, sealed_key, X'%x', created_at FROM principals WHERE name = 'bob'`, eveHash))

	st = reopen(t, path, 8)
	svc = serviceOver(t, st, key)
	for name, tok := range map[string]string{"bob": bobToken, "carol": carolToken} {
		if p, err := svc.Authenticate(ctx, tok); err != nil || p.Name != name {
			t.Errorf("%s after migration: %v, %v", name, p, err)
		}
	}
	if _, err := svc.Authenticate(ctx, eveToken); !errors.Is(err, custody.ErrPrincipalUnverified) {
		t.Errorf("eve, never logged, after migration: %v; want ErrPrincipalUnverified", err)
	}
	if _, err := st.DB().ExecContext(ctx, `DELETE FROM principals WHERE name = 'eve'`); err != nil {
		t.Fatal(err)
	}
	rep, err := svc.Verify(ctx, custody.VerifyOptions{})
	if err != nil {
		t.Fatalf("verify after migration: %v", err)
	}
	if len(rep.Uncovered) != 1 || !strings.Contains(rep.Uncovered[0], "acme/carol") || !strings.Contains(rep.Uncovered[0], "token hash") {
		t.Errorf("uncovered after migration = %q; want carol's token hash and sealed key", rep.Uncovered)
	}
	if _, err := st.DB().ExecContext(ctx, `UPDATE principals SET roles = '["user","admin"]' WHERE name = 'carol'`); err != nil {
		t.Fatal(err)
	}
	var d *custody.Difference
	if _, err := svc.Verify(ctx, custody.VerifyOptions{}); !errors.As(err, &d) || !strings.Contains(d.What, "acme/carol") {
		t.Errorf("verify after carol was made admin: %v; want a difference naming her", err)
	}
	if _, err := svc.Authenticate(ctx, carolToken); !errors.Is(err, custody.ErrPrincipalUnverified) {
		t.Errorf("carol made admin: %v; want ErrPrincipalUnverified", err)
	}
}
