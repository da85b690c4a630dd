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

// storeGauges registers the gauges of what st reports about itself:
// custody_sqlite_wal_bytes for a store with a WAL file.
func (m *metrics) storeGauges(st custody.Store) {
	if w, ok := st.(walSizer); ok {
		register(m.reg, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "custody_sqlite_wal_bytes",
			Help: "Size of the SQLite write-ahead log file in bytes; the writer resets it past 16 MiB (docs/operations.md).",
		}, func() float64 { return float64(w.WALBytes()) }))
	}
}
