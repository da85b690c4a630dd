package custody_test

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
)

// BenchmarkRememberConcurrent is the amortized cost of a write with 16
// writers at once, whose writes the store groups into shared commits: b.N
// admitted keyed user facts (each a new key, as when seeding), spread over
// 16 goroutines, on the seeded store of BenchmarkRemember. ns/op is the
// wall time divided by the writes; writes/s is the same as a rate.
func BenchmarkRememberConcurrent(b *testing.B) {
	e, alice := seeded(b, benchRecords(b))
	const writers = 16
	var next atomic.Int64
	next.Store(int64(benchRecords(b)) * 10)
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(benchRecords(b))*10+int64(b.N) {
					return
				}
				c := custody.Candidate{Namespace: "bench", Key: "c" + strconv.FormatInt(i, 10), Class: "fact", Body: body(int(i)), Channel: "user"}
				if _, err := e.svc.Remember(e.ctx, alice, c); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "writes/s")
}
