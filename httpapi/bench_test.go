package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/custody-mem/custody/storetest"
)

// benchClient posts JSON with a token over a client tuned for many
// concurrent loopback connections, and returns the response body.
func benchClient(b *testing.B, e *env, token string) func(path string, body any, want int) []byte {
	tr := e.srv.Client().Transport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 256
	c := &http.Client{Transport: tr}
	b.Cleanup(tr.CloseIdleConnections)
	return func(path string, body any, want int) []byte {
		j, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", e.srv.URL+path, bytes.NewReader(j))
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := c.Do(req)
		if err != nil {
			b.Error(err)
			return nil
		}
		out, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != want {
			b.Errorf("status %d, want %d (%v)", res.StatusCode, want, err)
		}
		return out
	}
}

// populated is an env whose alice holds (with bob) CUSTODY_BENCH_RECORDS
// records of storetest.PopulateFrom over v (2,000 by default), and alice's
// token.
func populated(b *testing.B, v storetest.Vocabulary) (*env, string) {
	e := newEnv(b, Options{RatePerSecond: -1})
	tok := e.principal("acme", "alice", []string{"user"})
	storetest.PopulateFrom(b, e.store, storetest.BenchRecords(b, 2000), v)
	if err := e.store.Tidy(e.ctx); err != nil {
		b.Fatal(err)
	}
	// As serve does at its start: the search index's copy in memory.
	e.store.PrepareSearch()
	e.store.AwaitSearchIndex()
	return e, tok
}

// parallelTimed runs op b.N times from clients goroutines (or
// CUSTODY_BENCH_CLIENTS), passing each call its number from 1, and reports
// calls per second under unit with the p50 and p99 latency of name.
func parallelTimed(b *testing.B, clients int, unit, name string, op func(i int64)) {
	if n, err := strconv.Atoi(os.Getenv("CUSTODY_BENCH_CLIENTS")); err == nil && n > 0 {
		clients = n
	}
	var calls atomic.Int64
	lat, elapsed := storetest.Hammer(b, clients, func(int) error {
		op(calls.Add(1))
		return nil
	})
	storetest.ReportCalls(b, lat, elapsed, unit, name)
}

// BenchmarkHTTPWrite measures admitted writes over loopback from 64
// concurrent clients among CUSTODY_BENCH_RECORDS records.
func BenchmarkHTTPWrite(b *testing.B) {
	e, tok := populated(b, storetest.Common)
	post := benchClient(b, e, tok)
	commits0, writes0 := e.store.CommitStats()
	parallelTimed(b, 64, "writes/s", "write", func(i int64) {
		post("/v1/memories", MemoryRequest{Namespace: "bench", Key: fmt.Sprintf("k%d", i), Class: "fact",
			Body: fmt.Sprintf("benchmark memory number %d about invoices and payees", i), Channel: "user"}, http.StatusCreated)
	})
	// Group commit's batch: how many writes a commit served.
	commits, writes := e.store.CommitStats()
	b.ReportMetric(float64(writes-writes0)/float64(commits-commits0), "writes/commit")
}

// BenchmarkHTTPSearch measures two-word searches of common words (about
// 2,400 matches each at 100k records) over loopback from 16 concurrent
// clients among CUSTODY_BENCH_RECORDS records, bodies returned.
func BenchmarkHTTPSearch(b *testing.B) { benchHTTPSearch(b, storetest.Common) }

// BenchmarkHTTPSearchVaried is BenchmarkHTTPSearch over a varied
// vocabulary (about 300 matches a query at 100k records).
func BenchmarkHTTPSearchVaried(b *testing.B) { benchHTTPSearch(b, storetest.Varied) }

func benchHTTPSearch(b *testing.B, v storetest.Vocabulary) {
	e, tok := populated(b, v)
	post := benchClient(b, e, tok)
	var hits atomic.Int64
	parallelTimed(b, 16, "searches/s", "search", func(i int64) {
		var res SearchResponse
		if err := json.Unmarshal(post("/v1/search", SearchRequest{Query: v.Query(int(i))}, http.StatusOK), &res); err != nil {
			b.Error(err)
		}
		hits.Add(int64(len(res.Items)))
	})
	if hits.Load() == 0 {
		b.Fatal("no search found anything")
	}
}
