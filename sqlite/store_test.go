package sqlite_test

import (
	"path/filepath"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/storetest"
)

func open(tb testing.TB) custody.Store {
	tb.Helper()
	s, err := sqlite.Open(tb.Context(), filepath.Join(tb.TempDir(), "c.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) custody.Store { return open(t) },
		// txn.Mentioning quotes the text into an FTS5 MATCH string, which
		// SQLite reads up to the first NUL: "unterminated string", reported
		// as ErrUnavailable, so a gate argument holding "\u0000" makes the
		// gate answer 503. Fix: return no records for text holding a NUL.
		storetest.KnownBug("MentioningUnstorable", "Mentioning fails on text holding a NUL byte"),
		// Times are stored as UnixNano, which wraps after 2262: an expiry in
		// the year 3000 is stored as 1830, so the record is expired at once
		// and verify reports a difference. Fix: refuse (or clamp) such times
		// when validating expires_at, or store them another way.
		storetest.KnownBug("FarFutureExpiry", "expires_at after 2262 wraps around"))
}

func BenchmarkWrite(b *testing.B) {
	storetest.BenchWrite(b, func(b *testing.B) custody.Store { return open(b) })
}

func BenchmarkSearch(b *testing.B) {
	storetest.BenchSearch(b, func(b *testing.B) custody.Store { return open(b) })
}
