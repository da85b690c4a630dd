package sqlite_test

import (
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/storetest"
)

// BenchmarkScale measures concurrent writes and searches among
// CUSTODY_BENCH_RECORDS records. SQLite is the single-machine store: one
// custody server owns the database file, so there is no two-server case;
// several servers share a PostgreSQL instead (BenchmarkScale in postgres/).
func BenchmarkScale(b *testing.B) {
	b.Run("servers=1", func(b *testing.B) {
		storetest.BenchScale(b, func(b *testing.B) []custody.Store { return []custody.Store{open(b)} })
	})
}
