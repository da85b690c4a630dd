package postgres_test

import (
	"path/filepath"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/tlog"
)

// keyedServices returns a function that makes a service over a store,
// every one with the same server key: a migration test writes, rewinds
// the database, reopens it and verifies the log the first service signed.
func keyedServices(t *testing.T) func(custody.Store) *custody.Service {
	t.Helper()
	key, _, err := tlog.LoadOrCreateServerKey(filepath.Join(t.TempDir(), "server.key"))
	if err != nil {
		t.Fatal(err)
	}
	return func(st custody.Store) *custody.Service {
		svc, err := custody.New(st, key, custody.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return svc
	}
}
