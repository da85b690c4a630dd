package httpapi

import (
	"github.com/custody-mem/custody"
	"github.com/prometheus/client_golang/prometheus"
)

// walSizer is a store with a write-ahead log file whose size is worth
// watching (the SQLite store).
type walSizer interface {
	WALBytes() int64
}

// searchCopier is a store that ranks searches with a copy of its search
// index in memory (the SQLite store).
type searchCopier interface {
	SearchIndexStats() (records, bytes, byCopy, byFTS5 int64)
}

// postgresCopier is a store whose servers rank searches with copies of
// the tenants' search terms in memory (the PostgreSQL store).
type postgresCopier interface {
	SearchCopyStats() (records, bytes, byCopy, bySQL int64)
}

// storeGauges registers the gauges of what st reports about itself:
// custody_sqlite_wal_bytes for a store with a WAL file, and the
// custody_sqlite_search_* figures of its search index's copy in memory.
func (m *metrics) storeGauges(st custody.Store) {
	if w, ok := st.(walSizer); ok {
		register(m.reg, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "custody_sqlite_wal_bytes",
			Help: "Size of the SQLite write-ahead log file in bytes; the writer resets it past 16 MiB (docs/operations.md).",
		}, func() float64 { return float64(w.WALBytes()) }))
	}
	if c, ok := st.(searchCopier); ok {
		register(m.reg, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "custody_sqlite_search_memory_records",
			Help: "Records in the in-memory copy of the search index (0 while it is built or off: docs/operations.md).",
		}, func() float64 { r, _, _, _ := c.SearchIndexStats(); return float64(r) }))
		register(m.reg, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "custody_sqlite_search_memory_bytes",
			Help: "Estimated memory of the in-memory copy of the search index in bytes (bounded by serve --search-memory).",
		}, func() float64 { _, b, _, _ := c.SearchIndexStats(); return float64(b) }))
		register(m.reg, prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "custody_sqlite_searches_ranked_total",
			Help:        "Lexical rankings (a search makes one or more), by what ranked them: the in-memory copy, or FTS5 (while the copy is built, stale or off).",
			ConstLabels: prometheus.Labels{"by": "memory"},
		}, func() float64 { _, _, n, _ := c.SearchIndexStats(); return float64(n) }))
		register(m.reg, prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "custody_sqlite_searches_ranked_total",
			Help:        "Lexical rankings (a search makes one or more), by what ranked them: the in-memory copy, or FTS5 (while the copy is built, stale or off).",
			ConstLabels: prometheus.Labels{"by": "fts5"},
		}, func() float64 { _, _, _, n := c.SearchIndexStats(); return float64(n) }))
	}
	if c, ok := st.(postgresCopier); ok {
		register(m.reg, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "custody_postgres_search_memory_records",
			Help: "Records in this server's copies of the tenants' search terms in memory (docs/postgres.md).",
		}, func() float64 { r, _, _, _ := c.SearchCopyStats(); return float64(r) }))
		register(m.reg, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "custody_postgres_search_memory_bytes",
			Help: "Estimated memory of this server's copies of the search terms in bytes (bounded by serve --search-memory).",
		}, func() float64 { _, b, _, _ := c.SearchCopyStats(); return float64(b) }))
		for _, by := range []string{"memory", "ts_rank_cd"} {
			register(m.reg, prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name:        "custody_postgres_searches_ranked_total",
				Help:        "Lexical rankings (a search makes one or more), by what ranked them: the copy in memory, or ts_rank_cd (while a copy is built, stale or off).",
				ConstLabels: prometheus.Labels{"by": by},
			}, func() float64 {
				_, _, inMemory, bySQL := c.SearchCopyStats()
				if by == "memory" {
					return float64(inMemory)
				}
				return float64(bySQL)
			}))
		}
	}
}
