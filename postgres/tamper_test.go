package postgres_test

import (
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/postgres"
	"github.com/custody-mem/custody/storetest"
)

// An insider's edits of what decides access are caught by verify and
// refused by the server (see storetest.RunTampering).
func TestTampering(t *testing.T) {
	storetest.RunTampering(t, storetest.Backend{
		Open: func(t *testing.T) custody.Store { return open(t) },
		Exec: func(t *testing.T, st custody.Store, q string) {
			t.Helper()
			mustExec(t, st.(*postgres.Store), q)
		},
		Postgres: true,
	})
}
