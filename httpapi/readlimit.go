package httpapi

import (
	"net"
	"net/http"
	"strconv"
)

// Defaults of the log readers' budget.
const (
	// DefaultLogReadRatePerSecond is the sustained rate of log reads of one
	// principal, or of one client address on the anonymous tile routes.
	DefaultLogReadRatePerSecond = 1000.0
	// DefaultLogReadBurst is how many log reads may come at once.
	DefaultLogReadBurst = 2000
)

// Log reads have a budget of their own. An auditor that fetches every
// inclusion proof, or a monitor that walks the tiles, must not use up the
// token bucket its principal writes with (and a writer must not starve
// its auditor), so the routes marked logRead take their token from
// readLimiter: by principal when they need a token, by client address
// when they do not (checkpoints and hash tiles, served to anyone).

// newReadLimiter is the log readers' limiter of opts, nil when it is off.
func newReadLimiter(opts Options) *limiter {
	rps := opts.LogReadRatePerSecond
	if rps == 0 {
		rps = DefaultLogReadRatePerSecond
	}
	if rps < 0 {
		return nil
	}
	burst := opts.LogReadBurst
	if burst <= 0 {
		burst = DefaultLogReadBurst
	}
	return newLimiter(rps, burst)
}

// addressLimited takes a token of the client address's log-read bucket
// (429 with Retry-After when there is none) before h.
func (s *Server) addressLimited(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.readLimiter != nil {
			if wait, ok := s.readLimiter.allow("addr:" + clientAddress(r)); !ok {
				w.Header().Set("Retry-After", strconv.Itoa(wait))
				writeJSONError(w, http.StatusTooManyRequests, codeRateLimited, rateLimitedReason, "")
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// clientAddress is the host of the connection's remote address, the unit
// the anonymous budget is counted in (as the connection cap is).
func clientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
