package sqlite_test

import (
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/storetest/tamper"
)

// An insider's edits of what decides access are caught by verify and
// refused by the server (see storetest/tamper).
func TestTampering(t *testing.T) {
	tamper.Run(t, tamper.Backend{
		Open: func(t *testing.T) custody.Store { return open(t) },
		Exec: func(t *testing.T, st custody.Store, q string) {
			t.Helper()
			if _, err := st.(*sqlite.Store).DB().ExecContext(t.Context(), q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		},
	})
}
