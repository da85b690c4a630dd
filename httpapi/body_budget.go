package httpapi

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
)

// Every request body is read against one budget of the server
// (Options.BodyBudget, package bodybudget): the bytes a request has read
// count until it ends, since what a handler decoded from them lives as
// long. A read that would pass it fails, and the request is answered 503
// server_busy with Retry-After, whatever route it is on. The batch route
// also reads its body as it decodes it, item by item (batch_stream.go), so
// that a batch holds what it decoded, not its bytes twice.

// budgetRetryAfter is the Retry-After of a request refused for the budget:
// requests are short, and the bytes they held are back when they end.
const budgetRetryAfter = "1"

// errBusy is the answer to a request whose body would pass the budget.
var errBusy = &apiError{status: http.StatusServiceUnavailable, code: codeServerBusy, retryAfter: budgetRetryAfter, unread: true,
	message: "the server is reading as many request bytes as it allows at once (serve --body-budget); nothing was done: retry after the seconds in Retry-After"}

// budgetMetrics exports the budget's use.
func (s *Server) budgetMetrics() {
	register(s.metrics.reg, prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "custody_http_body_bytes_held",
		Help: "Bytes of request bodies the requests being served have read (serve --body-budget bounds them)."},
		func() float64 { return float64(s.budget.Held()) }))
	register(s.metrics.reg, prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "custody_http_body_budget_refused_total",
		Help: "Requests answered 503 server_busy because their body would have passed the body budget."},
		func() float64 { return float64(s.budget.Refused()) }))
}
