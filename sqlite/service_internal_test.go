package sqlite

import (
	"path/filepath"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/tlog"
)

// openAt opens the store at path for a test, closed when it ends.
func openAt(t *testing.T, path string) *Store {
	t.Helper()
	st, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// services are services over stores, one each, all with one server key:
// servers (or a server and the offline CLI) sharing a store's file.
func services(t *testing.T, stores ...*Store) []*custody.Service {
	t.Helper()
	key, _, err := tlog.LoadOrCreateServerKey(filepath.Join(t.TempDir(), "server.key"))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]*custody.Service, len(stores))
	for i, st := range stores {
		if out[i], err = custody.New(st, key, custody.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// user adds a user principal of tenant acme through svc and returns it
// acting for itself, and its token.
func user(t *testing.T, svc *custody.Service, name string) (*custody.Caller, string) {
	t.Helper()
	p, tok, err := svc.AddPrincipal(t.Context(), custody.PrincipalInput{Tenant: "acme", Name: name, Roles: []string{"user"}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := svc.Act(t.Context(), p, "")
	if err != nil {
		t.Fatal(err)
	}
	return c, tok
}
