package httpapi

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/custody-mem/custody"
	"github.com/custody-mem/custody/storetest"
)

// BenchmarkHTTPBatchImport is a bulk import over HTTP, as custody import
// sends it: CUSTODY_BENCH_RECORDS candidates (10,000 by default) in
// batches of custody.MaxBatch to POST /v1/memories/batch, one after the
// other, into an empty store. Each op is one whole import; records/s and
// import-s are what the "batch import of 100k records" row reads.
func BenchmarkHTTPBatchImport(b *testing.B) {
	n := storetest.BenchRecords(b, 10000)
	var total time.Duration
	for range b.N {
		b.StopTimer()
		e := newEnv(b, Options{RatePerSecond: -1})
		tok := e.principal("acme", "alice", []string{"user"})
		post := benchClient(b, e, tok)
		batches := make([]BatchRequest, 0, n/custody.MaxBatch+1)
		for done := 0; done < n; done += custody.MaxBatch {
			var req BatchRequest
			for i := done; i < min(done+custody.MaxBatch, n); i++ {
				req.Items = append(req.Items, MemoryRequest{Namespace: "import", Class: "fact", Channel: "user",
					Body: fmt.Sprintf("imported fact %d about %s", i, storetest.Varied.Query(i))})
			}
			batches = append(batches, req)
		}
		b.StartTimer()
		start := time.Now()
		for _, req := range batches {
			post("/v1/memories/batch", req, http.StatusOK)
		}
		total += time.Since(start)
	}
	b.ReportMetric(float64(n*b.N)/total.Seconds(), "records/s")
	b.ReportMetric(total.Seconds()/float64(b.N), "import-s")
}
