package httpapi

import (
	"github.com/custody-mem/custody"
	"github.com/prometheus/client_golang/prometheus"
)

// authCounters registers custody_auth_cache_total{result="hit"|"miss"}:
// the authentications the service's principal cache served, and those
// that read the principal and checked it against the log.
func (m *metrics) authCounters(svc *custody.Service) {
	for _, r := range []struct {
		result string
		count  func(custody.AuthCacheStats) uint64
	}{{"hit", func(s custody.AuthCacheStats) uint64 { return s.Hits }}, {"miss", func(s custody.AuthCacheStats) uint64 { return s.Misses }}} {
		register(m.reg, prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "custody_auth_cache_total",
			Help:        "Bearer-token authentications served by the principal cache (hit) or read from the store and checked against the log (miss).",
			ConstLabels: prometheus.Labels{"result": r.result},
		}, func() float64 { return float64(r.count(svc.AuthCacheStats())) }))
	}
}
