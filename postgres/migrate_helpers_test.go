package postgres_test

import (
	"path/filepath"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/postgres"
	"github.com/custody-mem/custody/storetest"
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

// migration is the scene of a migration test: a new database, a store on
// it and its service (with keyedServices' key), and a user who writes
// facts there before the test rewinds the database.
type migration struct {
	dsn     string
	service func(custody.Store) *custody.Service
	st      *postgres.Store
	svc     *custody.Service
	alice   *custody.Caller
	fact    func(body string) string // the new fact's id
}

func newMigration(t *testing.T) *migration {
	t.Helper()
	m := &migration{dsn: newDatabase(t), service: keyedServices(t)}
	m.st = openDSN(t, m.dsn)
	m.svc = m.service(m.st)
	m.alice = userOf(t, m.svc)
	m.fact = storetest.Facter(t, m.svc, m.alice)
	return m
}
