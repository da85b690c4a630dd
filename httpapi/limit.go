package httpapi

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// limiterIdle is how long an unused bucket is kept; a principal that comes
// back after that starts with a full bucket, which is what it would have.
const limiterIdle = 10 * time.Minute

// limiter is one token bucket per principal. Every authenticated request
// takes one token, whatever it carries: a batch of a thousand candidates
// (POST /v1/memories/batch) too, so that a bulk import is bounded by the
// store rather than by the limit.
type limiter struct {
	rps   rate.Limit
	burst int

	mu      sync.Mutex
	buckets map[string]*bucket
	swept   time.Time
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

func newLimiter(rps float64, burst int) *limiter {
	return &limiter{rps: rate.Limit(rps), burst: burst, buckets: map[string]*bucket{}, swept: time.Now()}
}

// allow takes a token from key's bucket. When none is left it reports false
// and the whole seconds to wait before one is.
func (l *limiter) allow(key string) (retryAfter int, ok bool) {
	now := time.Now()
	l.mu.Lock()
	if now.Sub(l.swept) > limiterIdle {
		for k, b := range l.buckets {
			if now.Sub(b.seen) > limiterIdle {
				delete(l.buckets, k)
			}
		}
		l.swept = now
	}
	b, found := l.buckets[key]
	if !found {
		b = &bucket{lim: rate.NewLimiter(l.rps, l.burst)}
		l.buckets[key] = b
	}
	b.seen = now
	l.mu.Unlock()

	res := b.lim.ReserveN(now, 1)
	if !res.OK() {
		return 1, false
	}
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return max(1, int(math.Ceil(d.Seconds()))), false
	}
	return 0, true
}
