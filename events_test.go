package custody_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/tlog"
)

// failingCommits is a store whose write transactions all fail after their
// work is done, as a commit that fails would.
type failingCommits struct {
	custody.Store
	fail bool
}

var errCommit = errors.New("commit failed")

func (f *failingCommits) Update(ctx context.Context, fn func(custody.Tx) error) error {
	err := f.Store.Update(ctx, fn)
	if err == nil && f.fail {
		return errCommit
	}
	return err
}

// Observers (the admission metrics) hear of a transition once it is
// committed, and never of one that rolled back.
func TestEventsOnlyAfterCommit(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	key, _, err := tlog.LoadOrCreateServerKey(filepath.Join(dir, "server.key"))
	if err != nil {
		t.Fatal(err)
	}
	store := &failingCommits{Store: st}
	svc, err := custody.New(store, key, custody.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []custody.Event
	svc.OnEvent(func(e custody.Event) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, e)
	})
	p, _, err := svc.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: "alice", Roles: []string{"user"}})
	if err != nil {
		t.Fatal(err)
	}
	alice, err := svc.Act(ctx, p, "")
	if err != nil {
		t.Fatal(err)
	}
	admissions := func() int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, e := range seen {
			if e.Kind == "admission" {
				n++
			}
		}
		return n
	}
	in := custody.Candidate{Namespace: "n", Class: custody.ClassFact, Body: "a fact", Channel: "user"}
	store.fail = true
	if _, err := svc.Remember(ctx, alice, in); !errors.Is(err, errCommit) {
		t.Fatalf("remember with a failing commit: %v", err)
	}
	if n := admissions(); n != 0 {
		t.Errorf("%d admission events for a write that did not commit; want 0", n)
	}
	store.fail = false
	if _, err := svc.Remember(ctx, alice, in); err != nil {
		t.Fatal(err)
	}
	if n := admissions(); n != 1 {
		t.Errorf("%d admission events for one committed write; want 1", n)
	}
}
