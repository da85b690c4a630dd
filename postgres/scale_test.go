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
// server of one tenant queue on that tenant's advisory lock, so writes of
// one tenant are not expected to scale with servers (BenchmarkTenantScale
// writes to many); searches take no lock. Set CUSTODY_PG_FSYNC=on before
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

// BenchmarkTenantScale measures writes to 8 tenants from one custody server
// and from two sharing the database (in-process: each its own store, with
// its own connection pool, and its own service), and checks that each
// tenant's log verifies after. The acceptance figure is the rate of
// servers=2 over that of servers=1, at least 1.7 (docs/benchmarks.md).
// Like every benchmark it runs only with -bench, and it needs
// CUSTODY_TEST_POSTGRES.
func BenchmarkTenantScale(b *testing.B) {
	for _, servers := range []int{1, 2} {
		b.Run(fmt.Sprintf("servers=%d", servers), func(b *testing.B) {
			storetest.BenchTenantScale(b, func(b *testing.B) []custody.Store {
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
