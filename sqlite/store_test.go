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
	storetest.Run(t, func(t *testing.T) custody.Store { return open(t) })
}

func BenchmarkWrite(b *testing.B) {
	storetest.BenchWrite(b, func(b *testing.B) custody.Store { return open(b) })
}

func BenchmarkSearch(b *testing.B) {
	storetest.BenchSearch(b, func(b *testing.B) custody.Store { return open(b) })
}

func BenchmarkSearchHybrid(b *testing.B) {
	storetest.BenchSearchHybrid(b, func(b *testing.B) custody.Store { return open(b) })
}

// BenchmarkGate: CUSTODY_BENCH_RECORDS=100000 go test -run x -bench Gate -benchtime 200x ./sqlite
func BenchmarkGate(b *testing.B) {
	storetest.BenchGate(b, func(b *testing.B) custody.Store { return open(b) })
}
