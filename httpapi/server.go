// Package httpapi is custody's HTTP transport: the JSON API of design
// section 6 over a *custody.Service, with bearer authentication, strict
// request decoding, per-principal rate limits, Prometheus metrics,
// structured request logs and an OpenAPI 3.1 document generated from the
// same Go types the handlers decode and encode.
//
// The package is thin on purpose: every handler decodes its request,
// resolves the subject with Service.Act, calls one Service method and
// encodes the answer. Decisions (admission, visibility, the gate) live in
// the domain; this package only maps its sentinel errors to status codes
// (errors.go).
//
// Every route is declared once, in the table of routes.go; that table
// registers the handler on the mux and produces the OpenAPI paths, so the
// two cannot drift apart.
package httpapi

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/custody-mem/custody"
	"github.com/custody-mem/custody/internal/bodybudget"
	"github.com/custody-mem/custody/witness"
	"github.com/prometheus/client_golang/prometheus"
)

// Defaults for Options.
const (
	// DefaultMaxBodyBytes bounds a request body; larger bodies are 413.
	DefaultMaxBodyBytes int64 = 1 << 20
	// DefaultRequestTimeout bounds the work of one API request.
	DefaultRequestTimeout = 15 * time.Second
	// DefaultRatePerSecond is each principal's sustained request rate.
	DefaultRatePerSecond = 200.0
	// DefaultRateBurst is how many requests a principal may send at once.
	DefaultRateBurst = 400
	// DefaultReadHeaderTimeout bounds the reading of a request's headers.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultReadTimeout bounds the reading of a whole request, body
	// included; a body that arrives more slowly is cut (408).
	DefaultReadTimeout = 30 * time.Second
	// DefaultWriteTimeout bounds the writing of an answer, from the end of
	// the request's headers; it exceeds DefaultRequestTimeout so that a
	// slow request still gets its error. Event streams of mounted handlers
	// (GET with Accept: text/event-stream) are exempt.
	DefaultWriteTimeout = 60 * time.Second
	// DefaultIdleTimeout is how long a keep-alive connection may wait for
	// its next request.
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultMaxConnsPerAddr caps the connections one client address holds
	// open at once; one host running many agents shares one address.
	DefaultMaxConnsPerAddr = 256
	// DefaultBodyBudget is the bytes of request bodies all requests may
	// hold at once: four full batches (DefaultMaxBatchBytes).
	DefaultBodyBudget int64 = 64 << 20
)

// Options configure a Server. The zero value of each field means its default.
type Options struct {
	// MaxBodyBytes bounds a request body. Default DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxBatchBytes bounds the body of POST /v1/memories/batch. Default
	// DefaultMaxBatchBytes.
	MaxBatchBytes int64
	// RequestTimeout bounds the work of one API request (not of handlers
	// added with Mount). Default DefaultRequestTimeout.
	RequestTimeout time.Duration
	// RatePerSecond and RateBurst shape each principal's token bucket;
	// requests beyond it are 429 with Retry-After. Defaults
	// DefaultRatePerSecond and DefaultRateBurst; a negative RatePerSecond
	// turns the limit off.
	RatePerSecond float64
	RateBurst     int
	// Logger receives one line per request and every internal error.
	// Default slog.Default().
	Logger *slog.Logger
	// ReadHeaderTimeout, ReadTimeout, WriteTimeout and IdleTimeout are the
	// connection timeouts of the http.Server that HTTPServer returns.
	// Defaults DefaultReadHeaderTimeout, DefaultReadTimeout,
	// DefaultWriteTimeout and DefaultIdleTimeout.
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	// LogReadRatePerSecond and LogReadBurst shape the token bucket of log
	// reads (checkpoints, proofs, entries, tiles), apart from the writes'
	// bucket: per principal, and per client address for the anonymous
	// tile routes. Defaults DefaultLogReadRatePerSecond and
	// DefaultLogReadBurst; a negative LogReadRatePerSecond turns it off.
	LogReadRatePerSecond float64
	LogReadBurst         int
	// MaxConnsPerAddr caps the connections one client address may hold open
	// through the listener Listener wraps; connections beyond it are closed
	// at once (see connLimit). Default DefaultMaxConnsPerAddr; negative
	// turns the cap off.
	MaxConnsPerAddr int
	// WitnessPolicy, if set and not quorum none, is the installation's
	// C2SP witness policy: the checkpoint served as a log's current one
	// (/log/<ID>/checkpoint, GET /v1/log/checkpoint) is the newest whose
	// cosignatures met it (see cosign.go). Nil: the newest checkpoint.
	WitnessPolicy *witness.Policy
	// BodyBudget bounds the bytes of request bodies all requests hold at
	// once while they are read and decoded (body_budget.go); a request
	// whose body would pass it is answered 503 server_busy with
	// Retry-After. Default DefaultBodyBudget; it is raised to MaxBatchBytes
	// and MaxBodyBytes when smaller, so that every request the limits
	// allow can be served alone.
	BodyBudget int64
	// Registry receives the server's metrics. Default: a fresh registry
	// (with the Go and process collectors). /metrics serves it when it is
	// also a prometheus.Gatherer, else prometheus.DefaultGatherer.
	Registry prometheus.Registerer
}

// Server serves the custody HTTP API.
type Server struct {
	svc     *custody.Service
	opts    Options
	log     *slog.Logger
	mux     *http.ServeMux
	metrics *metrics
	limiter *limiter
	// readLimiter is the budget of log reads (proofs, entries, tiles), per
	// principal and, for anonymous tile reads, per address: apart from
	// the writes' (see readlimit.go).
	readLimiter *limiter
	routes      []route
	openapi     []byte
	// logIDs maps the IDs the tenants' logs are published under (tiles.go).
	logIDs *custody.LogIDs
	// budget bounds the request bytes held at once (body_budget.go).
	budget *bodybudget.Budget
}

// New returns a Server over svc. It subscribes to svc's events for the
// admission and gate metrics, so call it before svc serves requests.
func New(svc *custody.Service, opts Options) *Server {
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.MaxBatchBytes <= 0 {
		opts.MaxBatchBytes = DefaultMaxBatchBytes
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = DefaultRequestTimeout
	}
	if opts.RatePerSecond == 0 {
		opts.RatePerSecond = DefaultRatePerSecond
	}
	if opts.RateBurst <= 0 {
		opts.RateBurst = DefaultRateBurst
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	opts.ReadHeaderTimeout = orDefault(opts.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	opts.ReadTimeout = orDefault(opts.ReadTimeout, DefaultReadTimeout)
	opts.WriteTimeout = orDefault(opts.WriteTimeout, DefaultWriteTimeout)
	opts.IdleTimeout = orDefault(opts.IdleTimeout, DefaultIdleTimeout)
	if opts.MaxConnsPerAddr == 0 {
		opts.MaxConnsPerAddr = DefaultMaxConnsPerAddr
	}
	if opts.BodyBudget <= 0 {
		opts.BodyBudget = DefaultBodyBudget
	}
	opts.BodyBudget = max(opts.BodyBudget, opts.MaxBatchBytes, opts.MaxBodyBytes)
	s := &Server{svc: svc, opts: opts, log: opts.Logger, mux: http.NewServeMux(), logIDs: svc.LogIDs(), budget: bodybudget.New(opts.BodyBudget)}
	s.metrics = newMetrics(opts.Registry)
	s.metrics.storeGauges(svc.Store())
	s.metrics.authCounters(svc)
	svc.OnEvent(s.metrics.observe)
	register(s.metrics.reg, newBacklog(svc))
	s.budgetMetrics()
	if opts.RatePerSecond > 0 {
		s.limiter = newLimiter(opts.RatePerSecond, opts.RateBurst)
	}
	s.readLimiter = newReadLimiter(opts)
	s.routes = s.table()
	for _, rt := range s.routes {
		s.handle(rt)
	}
	s.handleTiles()
	s.openapi = mustOpenAPI(s.routes)
	return s
}

// orDefault is d unless it is zero or negative.
func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Handler returns the http.Handler that serves the API.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serveHTTP) }

// HTTPServer returns an http.Server that serves Handler with the
// connection timeouts of the options. Serve it on a listener wrapped by
// Listener.
func (s *Server) HTTPServer() *http.Server {
	return &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: s.opts.ReadHeaderTimeout,
		ReadTimeout:       s.opts.ReadTimeout,
		WriteTimeout:      s.opts.WriteTimeout,
		IdleTimeout:       s.opts.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
}

// Listener wraps ln with the per-address connection cap of the options
// (ln itself when the cap is off).
func (s *Server) Listener(ln net.Listener) net.Listener {
	if s.opts.MaxConnsPerAddr < 0 {
		return ln
	}
	return limitConns(ln, s.opts.MaxConnsPerAddr, s.log)
}

// Mount serves h at pattern (a ServeMux pattern such as "/mcp") behind the
// same bearer authentication, rate limit, panic recovery, metrics and
// request log as the API. The handler finds its caller with PrincipalFrom.
// No request timeout is applied, and an authenticated GET that asks for an
// event stream (Accept: text/event-stream) is exempt from the read and write
// timeouts of HTTPServer, so long-lived streams keep working; h must honour
// its request's context. Such streams are counted in the request metrics but
// not timed (their duration is the stream's life, not a latency). Mounted
// handlers are not part of the OpenAPI document.
func (s *Server) Mount(pattern string, h http.Handler) {
	s.mux.Handle(pattern, s.instrument(pattern, s.Authenticated(streams(h))))
}

// MountPublic serves h at pattern without a bearer token, with the panic
// recovery, metrics, request log and request timeout of the API: for
// static pages such as the console, whose own calls to the API carry the
// token.
func (s *Server) MountPublic(pattern string, h http.Handler) {
	s.mux.Handle(pattern, s.instrument(pattern, s.withTimeout(h)))
}

// serveHTTP routes a request. Requests that match no pattern get the JSON
// error body of every other failure (404, or 405 with Allow).
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Body != nil && r.Body != http.NoBody {
		raw := r.Body
		b := s.budget.Wrap(raw)
		r.Body = b
		defer func() {
			b.Release()
			if w.Header().Get("Connection") == "close" {
				linger(w, raw) // an answer given before the body's end (body_linger.go)
			}
		}()
	}
	if _, pattern := s.mux.Handler(r); pattern == "" {
		s.instrument("unmatched", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.mux.ServeHTTP(&unmatchedWriter{ResponseWriter: w}, r)
		})).ServeHTTP(w, r)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// handle registers one route of the table.
func (s *Server) handle(rt route) {
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := rt.handler(w, r); err != nil {
			// No error is answered to a token revoked meanwhile, whatever
			// the error. The check runs on a context of its own: the
			// server ends the request's when a read of its connection
			// fails (a body cut by the read timeout, or by the client),
			// and the check would then fail in its stead (a 503 for the
			// cut body of a token nobody changed).
			if rt.authInWrite {
				ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), s.opts.RequestTimeout)
				aerr := s.svc.SettlePrincipals(ctx)
				cancel()
				if aerr != nil {
					err = aerr
				}
			}
			s.writeError(w, r, rt, err)
		}
	})
	switch {
	case rt.authInWrite:
		h = s.withTimeout(s.authenticated(h, s.limiter, true))
	case rt.logRead && rt.public:
		h = s.withTimeout(s.addressLimited(h))
	case rt.logRead:
		h = s.withTimeout(s.authenticated(h, s.readLimiter, false))
	case !rt.public:
		h = s.withTimeout(s.Authenticated(h))
	}
	s.mux.Handle(rt.pattern(), s.instrument(rt.pattern(), h))
}

// withTimeout bounds the request's context by the request timeout; the
// domain and the store honour it.
func (s *Server) withTimeout(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), s.opts.RequestTimeout)
		defer cancel()
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

// unmatchedWriter turns the mux's plain-text 404 and 405 into JSON errors.
type unmatchedWriter struct {
	http.ResponseWriter
	swallow bool
}

func (w *unmatchedWriter) WriteHeader(code int) {
	switch code {
	case http.StatusNotFound:
		w.swallow = true
		writeJSONError(w.ResponseWriter, code, "not_found", "no such route; see /v1/openapi.json", "")
	case http.StatusMethodNotAllowed:
		w.swallow = true
		writeJSONError(w.ResponseWriter, code, "method_not_allowed", "this route does not take that method; see the Allow header", "")
	default:
		w.ResponseWriter.WriteHeader(code)
	}
}

func (w *unmatchedWriter) Write(b []byte) (int, error) {
	if w.swallow {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}
