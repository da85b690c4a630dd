package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/custody-mem/custody"
	"github.com/custody-mem/custody/internal/bulk"
	"github.com/custody-mem/custody/storetest"
)

// BenchmarkHTTPBatchImport is a bulk import over HTTP, sent as custody
// import sends it: CUSTODY_BENCH_RECORDS candidates (10,000 by default) in
// batches of custody.MaxBatch to POST /v1/memories/batch, into an empty
// store, bulk.DefaultParallel batches in flight (bulk.Send, which custody
// import uses; CUSTODY_BENCH_PARALLEL=1 sends them one after the other),
// each answer decoded as custody import's client decodes it (the states
// alone: client.BatchStates). The client
// runs in the benchmark's process, on the same cores as the server, as
// custody import on the server's machine would. Each op is one whole
// import; records/s and import-s are what the issue's "batch import of
// 100k records" row reads.
func BenchmarkHTTPBatchImport(b *testing.B) {
	n := storetest.BenchRecords(b, 10000)
	parallel := bulk.DefaultParallel
	if p, err := strconv.Atoi(os.Getenv("CUSTODY_BENCH_PARALLEL")); err == nil && p > 0 {
		parallel = p
	}
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
		_, errs := bulk.Send(e.ctx, len(batches), parallel, nil, func(_ context.Context, i int) error {
			var res struct {
				Items []struct {
					State custody.State `json:"state"`
				} `json:"items"`
			}
			if err := json.Unmarshal(post("/v1/memories/batch", batches[i], http.StatusOK), &res); err != nil || len(res.Items) != len(batches[i].Items) {
				return fmt.Errorf("batch %d: %d decisions, %v", i, len(res.Items), err)
			}
			return nil
		}, nil)
		total += time.Since(start)
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(n*b.N)/total.Seconds(), "records/s")
	b.ReportMetric(total.Seconds()/float64(b.N), "import-s")
}
