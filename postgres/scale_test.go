package postgres_test

import (
	"fmt"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/storetest"
)

// BenchmarkScale measures concurrent writes and searches among
// CUSTODY_BENCH_RECORDS records with one custody server, and with two
// sharing the database as a scaled-out deployment does. Writers of every
// server queue on one advisory lock, so writes are not expected to scale
// with servers; searches take no lock. Set CUSTODY_PG_FSYNC=on before
// sourcing .ci/postgres.sh for write rates that include durable commits.
func BenchmarkScale(b *testing.B) {
	for _, servers := range []int{1, 2} {
		b.Run(fmt.Sprintf("servers=%d", servers), func(b *testing.B) {
			storetest.BenchScale(b, func(b *testing.B) []custody.Store {
				dsn := newDatabase(b)
				stores := make([]custody.Store, servers)
				for i := range stores {
					stores[i] = openDSN(b, dsn)
				}
				return stores
			})
		})
	}
}
