package postgres_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/httpapi"
	"github.com/custody-mem/custody/postgres"
	"github.com/custody-mem/custody/storetest"
	"github.com/custody-mem/custody/tlog"
)

// BenchmarkHTTPWrite is the custody side of the comparison with another
// store on the same PostgreSQL server (docs/benchmarks.md): admitted
// keyed user facts posted over loopback to a custody server on
// PostgreSQL, by CUSTODY_BENCH_CLIENTS clients (1 by default: one
// sequential client, as the comparison runs), among CUSTODY_BENCH_RECORDS
// records populated first (none by default). It reports the writes run
// ahead in one round trip (ahead/write) and the batches that were not.
// CUSTODY_BENCH_PG_SQL, if set, is run on the benchmark's database once
// its migrations are, to measure what a schema change would cost or save
// (DROP INDEX records_search, say): the database is the benchmark's own,
// made anew and dropped after.
func BenchmarkHTTPWrite(b *testing.B) {
	st := open(b)
	if q := os.Getenv("CUSTODY_BENCH_PG_SQL"); q != "" {
		if _, err := st.(*postgres.Store).Pool().Exec(b.Context(), q); err != nil {
			b.Fatalf("CUSTODY_BENCH_PG_SQL: %v", err)
		}
	}
	if n := storetest.BenchRecords(b, 0); n > 0 {
		storetest.PopulateFrom(b, st, n, storetest.Common)
	}
	svc, _, tok := benchService(b, st, "writer")
	srv := httptest.NewServer(httpapi.New(svc, httpapi.Options{RatePerSecond: -1, Logger: slog.New(slog.DiscardHandler)}).Handler())
	b.Cleanup(srv.Close)
	tr := srv.Client().Transport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 256
	client := &http.Client{Transport: tr}
	b.Cleanup(tr.CloseIdleConnections)
	clients := 1
	if n, err := strconv.Atoi(os.Getenv("CUSTODY_BENCH_CLIENTS")); err == nil && n > 0 {
		clients = n
	}
	// CUSTODY_BENCH_AHEAD=alternate (one client) runs every other write
	// with its reads, as before batches ran ahead, and reports the p50 of
	// each half: the two meet the same load.
	alternate := os.Getenv("CUSTODY_BENCH_AHEAD") == "alternate" && clients == 1
	var halves [2][]time.Duration
	var calls atomic.Int64
	lat, elapsed := storetest.Hammer(b, clients, func(int) error {
		i := calls.Add(1)
		if alternate {
			postgres.SetAhead(st.(*postgres.Store), i%2 == 0)
			defer func(t time.Time) { halves[i%2] = append(halves[i%2], time.Since(t)) }(time.Now())
		}
		body, _ := json.Marshal(httpapi.MemoryRequest{Namespace: "bench", Key: fmt.Sprintf("k%d", i), Class: "fact",
			Body: fmt.Sprintf("benchmark memory number %d about invoices and payees", i), Channel: "user"})
		req, _ := http.NewRequest("POST", srv.URL+"/v1/memories", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		res, err := client.Do(req)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusCreated {
			return fmt.Errorf("status %d", res.StatusCode)
		}
		return nil
	})
	storetest.ReportCalls(b, lat, elapsed, "writes/s", "write")
	for k, name := range []string{"ahead", "reads"} {
		if l := halves[k]; len(l) > 0 {
			slices.Sort(l)
			b.ReportMetric(float64(l[len(l)/2].Microseconds()), name+"-p50-µs")
		}
	}
	a := st.(*postgres.Store).AheadStats()
	b.ReportMetric(float64(a.Applied)/float64(b.N), "ahead/write")
	b.ReportMetric(float64(a.Missed+a.Declined+a.Failed), "not-ahead-batches")
}

// benchService is a service over st with a fresh server key and the
// default policy, as a server runs, and a user of tenant acme named name,
// with its bearer token.
func benchService(b *testing.B, st custody.Store, name string) (*custody.Service, *custody.Principal, string) {
	key, _, err := tlog.LoadOrCreateServerKey(filepath.Join(b.TempDir(), "server.key"))
	if err != nil {
		b.Fatal(err)
	}
	svc, err := custody.New(st, key, custody.Options{})
	if err != nil {
		b.Fatal(err)
	}
	p, tok, err := svc.AddPrincipal(b.Context(), custody.PrincipalInput{Tenant: "acme", Name: name, Roles: []string{"user"}})
	if err != nil {
		b.Fatal(err)
	}
	return svc, p, tok
}
