package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/custody-mem/custody"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

type metrics struct {
	requests   *prometheus.CounterVec
	duration   *prometheus.HistogramVec
	admissions *prometheus.CounterVec
	gate       *prometheus.CounterVec
	handler    http.Handler
	reg        prometheus.Registerer // where the store's and the review queue's gauges go (storemetrics.go, backlog.go)
}

func newMetrics(reg prometheus.Registerer) *metrics {
	var gatherer prometheus.Gatherer = prometheus.DefaultGatherer
	if reg == nil {
		r := prometheus.NewRegistry()
		r.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		reg, gatherer = r, r
	} else if g, ok := reg.(prometheus.Gatherer); ok {
		gatherer = g
	}
	m := &metrics{reg: reg}
	m.requests = register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "custody_http_requests_total", Help: "HTTP requests by route pattern, method and status code.",
	}, []string{"route", "method", "code"}))
	m.duration = register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "custody_http_request_duration_seconds", Help: "HTTP request latency by route pattern.",
		Buckets: prometheus.DefBuckets,
	}, []string{"route"}))
	m.admissions = register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "custody_admissions_total", Help: "Admission decisions by channel, class and resulting state.",
	}, []string{"channel", "class", "state"}))
	m.gate = register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "custody_gate_decisions_total", Help: "Action gate decisions by action and decision.",
	}, []string{"action", "decision"}))
	m.handler = promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{})
	return m
}

// register registers c, or returns the collector already registered under
// the same description (two servers sharing one registry).
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
		panic(fmt.Sprintf("httpapi: registering metrics: %v", err))
	}
	return c
}

// observe counts the service's decisions.
func (m *metrics) observe(e custody.Event) {
	switch e.Kind {
	case "admission":
		m.admissions.WithLabelValues(e.Channel, string(e.Class), e.Decision).Inc()
	case "gate":
		// The service names the action as the policy does, or "other":
		// the label set is bounded by the policy, not by callers.
		m.gate.WithLabelValues(e.Action, e.Decision).Inc()
	}
}

// requestInfo is filled in by inner handlers for the request log.
type requestInfo struct{ principal string }

type infoKey struct{}

func infoFrom(ctx context.Context) *requestInfo {
	i, _ := ctx.Value(infoKey{}).(*requestInfo)
	return i
}

// instrument wraps a handler registered under pattern: it recovers panics
// as 500 JSON errors, counts and times the request under the pattern (never
// the raw path), and logs one line for it.
func (s *Server) instrument(pattern string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		info := &requestInfo{}
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.ErrorContext(r.Context(), "panic serving request", "route", pattern, "method", r.Method,
					"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				if !sw.wrote {
					writeJSONError(sw, http.StatusInternalServerError, codeInternal, internalMessage, "")
				}
			}
			d := time.Since(start)
			code := sw.status
			if code == 0 {
				code = http.StatusOK
			}
			s.metrics.requests.WithLabelValues(pattern, r.Method, strconv.Itoa(code)).Inc()
			if !isStreamAnswer(r, sw) { // a stream's duration is its life, not a latency
				s.metrics.duration.WithLabelValues(pattern).Observe(d.Seconds())
			}
			level := slog.LevelInfo
			if code >= 500 {
				level = slog.LevelWarn
			}
			s.log.LogAttrs(r.Context(), level, "request",
				slog.String("method", r.Method), slog.String("route", pattern), slog.Int("status", code),
				slog.Duration("duration", d), slog.String("principal", info.principal), slog.Int64("bytes", sw.bytes))
		}()
		h.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), infoKey{}, info)))
	})
}

// statusWriter remembers the status and size of an answer.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.status, w.wrote = http.StatusOK, true
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Flush lets streaming handlers (mounted with Mount) flush through.
func (w *statusWriter) Flush() {
	if !w.wrote {
		w.status, w.wrote = http.StatusOK, true
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) error {
	s.metrics.handler.ServeHTTP(w, r)
	return nil
}
