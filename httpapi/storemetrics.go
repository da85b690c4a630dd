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

// textsKeeper is a store that keeps the texts its searches read beside
// its copy of the search index (the SQLite store).
type textsKeeper interface {
	SearchTextsStats() (records, bytes, kept, read int64)
}

// postgresCopier is a store whose servers rank searches with copies of
// the tenants' search terms in memory (the PostgreSQL store).
type postgresCopier interface {
	SearchCopyStats() (records, bytes, byCopy, bySQL int64)
}

// storeGauges registers the gauges of what st reports about itself:
// custody_sqlite_wal_bytes for a store with a WAL file, and the figures
// of the search copies in memory (custody_sqlite_search_* and
// custody_postgres_search_*, by copyMetrics).
func (m *metrics) storeGauges(st custody.Store) {
	if w, ok := st.(walSizer); ok {
		register(m.reg, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "custody_sqlite_wal_bytes",
			Help: "Size of the SQLite write-ahead log file in bytes; the writer resets it past 16 MiB (docs/operations.md).",
		}, func() float64 { return float64(w.WALBytes()) }))
	}
	if c, ok := st.(searchCopier); ok {
		copyMetrics(m.reg, copyNames{
			prefix:  "custody_sqlite",
			records: "Records in the in-memory copy of the search index (0 while it is built or off: docs/operations.md).",
			bytes:   "Estimated memory of the in-memory copy of the search index in bytes (bounded by serve --search-memory).",
			ranked:  "Lexical rankings (a search makes one or more), by what ranked them: the in-memory copy, or FTS5 (while the copy is built, stale or off).",
			other:   "fts5",
		}, c.SearchIndexStats)
	}
	if k, ok := st.(textsKeeper); ok {
		textsMetrics(m.reg, k)
	}
	if c, ok := st.(postgresCopier); ok {
		copyMetrics(m.reg, copyNames{
			prefix:  "custody_postgres",
			records: "Records in this server's copies of the tenants' search terms in memory (docs/postgres.md).",
			bytes:   "Estimated memory of this server's copies of the search terms, with the glove forms kept beside them, in bytes (bounded by serve --search-memory).",
			ranked:  "Lexical rankings (a search makes one or more), by what ranked them: the copy in memory, or ts_rank_cd (while a copy is built, stale or off).",
			other:   "ts_rank_cd",
		}, c.SearchCopyStats)
	}
}

// copyNames are the names and help of a backend's search copy metrics:
// PREFIX_search_memory_records, PREFIX_search_memory_bytes and
// PREFIX_searches_ranked_total by "memory" and by other, the ranking used
// when the copy cannot rank.
type copyNames struct {
	prefix, records, bytes, ranked, other string
}

// copyMetrics registers the metrics of a copy of the search index in
// memory, read from stats (records, bytes, rankings by the copy, others).
func copyMetrics(reg prometheus.Registerer, n copyNames, stats func() (records, bytes, byCopy, byOther int64)) {
	register(reg, prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: n.prefix + "_search_memory_records", Help: n.records},
		func() float64 { r, _, _, _ := stats(); return float64(r) }))
	register(reg, prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: n.prefix + "_search_memory_bytes", Help: n.bytes},
		func() float64 { _, b, _, _ := stats(); return float64(b) }))
	register(reg, prometheus.NewCounterFunc(prometheus.CounterOpts{Name: n.prefix + "_searches_ranked_total", Help: n.ranked, ConstLabels: prometheus.Labels{"by": "memory"}},
		func() float64 { _, _, c, _ := stats(); return float64(c) }))
	register(reg, prometheus.NewCounterFunc(prometheus.CounterOpts{Name: n.prefix + "_searches_ranked_total", Help: n.ranked, ConstLabels: prometheus.Labels{"by": n.other}},
		func() float64 { _, _, _, o := stats(); return float64(o) }))
}

// textsMetrics registers custody_sqlite_search_texts_records and
// _bytes, and custody_sqlite_search_rows_total by where a ranking took
// its records' ids and texts from: "memory" (the texts kept) or "rows".
func textsMetrics(reg prometheus.Registerer, k textsKeeper) {
	register(reg, prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "custody_sqlite_search_texts_records",
		Help: "Records whose id, key and body the store keeps in memory for its searches' rankings (docs/operations.md)."},
		func() float64 { r, _, _, _ := k.SearchTextsStats(); return float64(r) }))
	register(reg, prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "custody_sqlite_search_texts_bytes",
		Help: "Estimated memory of the texts kept for searches in bytes (at most 64 MiB, or a quarter of serve --search-memory)."},
		func() float64 { _, b, _, _ := k.SearchTextsStats(); return float64(b) }))
	const help = "Records the searches' rankings took, by where their ids and texts came from: the texts kept in memory, or the records' rows."
	register(reg, prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "custody_sqlite_search_rows_total", Help: help, ConstLabels: prometheus.Labels{"from": "memory"}},
		func() float64 { _, _, n, _ := k.SearchTextsStats(); return float64(n) }))
	register(reg, prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "custody_sqlite_search_rows_total", Help: help, ConstLabels: prometheus.Labels{"from": "rows"}},
		func() float64 { _, _, _, n := k.SearchTextsStats(); return float64(n) }))
}
