package postgres_test

import (
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/postgres"
	"github.com/custody-mem/custody/storetest/tamper"
)

// An insider's edits of what decides access are caught by verify and
// refused by the server (see storetest/tamper).
func TestTampering(t *testing.T) {
	tamper.Run(t, tamper.Backend{
		Open: func(t *testing.T) custody.Store { return open(t) },
		Exec: func(t *testing.T, st custody.Store, q string) {
			t.Helper()
			mustExec(t, st.(*postgres.Store), q)
		},
		Postgres: true,
	})
}
