package sqlite_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/storetest"
)

// An erased body is in no page of the store file once the WAL is
// checkpointed: not in the records table, not in either search index,
// not in a freed page. The body of a record that was not erased is (the
// twin: the check reads what it claims to read).
func TestErasedBodyLeavesTheFile(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "c.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := storetest.NewService(t, st, storetest.NewClock(storetest.Start))
	add := func(name string, roles ...string) *custody.Caller {
		p, _, err := svc.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: name, Roles: roles})
		if err != nil {
			t.Fatal(err)
		}
		c, err := svc.Act(ctx, p, "")
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	alice, bob, root := add("alice", "user"), add("bob", "user"), add("root", "admin")
	const gone, kept = "xylophonequartz", "marmaladezephyr"
	for _, w := range []struct {
		c    *custody.Caller
		body string
	}{{alice, "my passport is " + gone + " 7781"}, {alice, "second note " + gone}, {bob, "bob keeps " + kept}} {
		if _, err := svc.Remember(ctx, w.c, custody.Candidate{Namespace: "n", Class: custody.ClassFact, Body: w.body, Channel: "user"}); err != nil {
			t.Fatal(err)
		}
	}
	// A search moves the pending rows into both FTS5 indexes.
	if res, err := svc.Search(ctx, alice, custody.SearchInput{Query: gone}); err != nil || len(res) != 2 {
		t.Fatalf("search before the erasure: %d, %v", len(res), err)
	}
	fileHas := func(s string) bool {
		t.Helper()
		// Beside the store's own checkpoints, which would make this one
		// give up at once and leave old pages in the file.
		if busy, err := sqlite.TruncateWAL(ctx, st); err != nil || busy {
			t.Fatalf("checkpoint: busy %v, %v", busy, err)
		}
		var all []byte
		for _, f := range []string{path, path + "-wal"} {
			b, err := os.ReadFile(f)
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			all = append(all, b...)
		}
		return bytes.Contains(all, []byte(s))
	}
	if !fileHas(gone) || !fileHas(kept) {
		t.Fatal("the bodies are not in the file before the erasure: the check reads the wrong bytes")
	}
	if _, err := svc.EraseSubject(ctx, root, "alice", ""); err != nil {
		t.Fatal(err)
	}
	if fileHas(gone) {
		t.Error("an erased body is still in the store file")
	}
	if !fileHas(kept) {
		t.Error("bob's body left the store file")
	}
	if _, err := svc.Verify(ctx, custody.VerifyOptions{}); err != nil {
		t.Fatalf("verify after the erasure: %v", err)
	}
}
