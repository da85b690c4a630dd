package custody_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/storetest"
)

// The benchmarks' stores and clock: a synthetic corpus, stores seeded once a
// size and kept for every benchmark of the run (and for later runs, with
// CUSTODY_BENCH_SEEDS), and the timing every benchmark here reports with.

// benchRecords is the store size for the benchmarks: CUSTODY_BENCH_RECORDS,
// default 10,000. Run: CUSTODY_BENCH_RECORDS=100000 go test -run x -bench . -benchtime 2000x .
func benchRecords(b *testing.B) int { return storetest.BenchRecords(b, 10000) }

var words = []string{"invoice", "meeting", "travel", "payroll", "garden", "recipe", "flight", "doctor", "school", "budget",
	"concert", "library", "hiking", "tax", "insurance", "birthday", "dentist", "plumber", "holiday", "report"}

// term is word j of a synthetic 5,000-word vocabulary.
func term(j int) string { return fmt.Sprintf("%s%d", words[j%20], j%5000/20) }

// body is a deterministic eight-word note, so a term matches about 16 of
// every 10,000 records, as in varied natural text.
func body(i int) string {
	s := fmt.Sprintf("note %d:", i)
	for k := range 8 {
		s += " " + term(i*7919+k*104729)
	}
	return s
}

var seededEnvs = map[int]*env{}

// benchCleanup closes the stores benchmarks keep across runs of b.N and
// removes their directories, after all tests and benchmarks.
var benchCleanup []func()

func TestMain(m *testing.M) {
	code := m.Run()
	for _, f := range slices.Backward(benchCleanup) {
		f()
	}
	os.Exit(code)
}

// benchDir is a directory that lives until the test binary ends (a
// benchmark's b.TempDir goes with its first run).
func benchDir(b *testing.B) string {
	dir, err := os.MkdirTemp("", "custody-bench-")
	if err != nil {
		b.Fatal(err)
	}
	benchCleanup = append(benchCleanup, func() { os.RemoveAll(dir) })
	return dir
}

// benchEnv is an env over the store in dir ("" = a new directory) that is
// closed after all benchmarks.
func benchEnv(b *testing.B, dir string) *env {
	if dir == "" {
		dir = benchDir(b)
	}
	e := newEnvAt(keepTB{b}, dir, custody.Options{Embedder: benchEmbedder(b)})
	benchCleanup = append(benchCleanup, func() { e.store.Close() })
	benchCleanup = append(benchCleanup, startBenchEmbedding(b, e)) // stops before the store closes
	return e
}

// keepTB reports failures to a benchmark but leaves cleanups to
// benchCleanup, as the env outlives the benchmark's first run.
type keepTB struct{ testing.TB }

func (keepTB) Cleanup(func()) {}

// seeded returns a service whose subject alice holds n admitted records.
// Benchmarks of one run share it (they only add records); it is seeded by
// 16 concurrent writers, which group commit batches. With
// CUSTODY_BENCH_SEEDS=DIR the seeded store is kept in DIR and later runs
// start from a copy of it instead of seeding again.
func seeded(b *testing.B, n int) (*env, *custody.Caller) {
	b.Helper()
	e, ok := seededEnvs[n]
	if !ok {
		dir := benchDir(b)
		cache := os.Getenv("CUSTODY_BENCH_SEEDS")
		if cache != "" {
			cache = filepath.Join(cache, "seed-"+strconv.Itoa(n))
			if copyFiles(cache, dir, func(string) bool { return true }) == nil {
				e = benchEnv(b, dir)
				if err := e.store.Tidy(e.ctx); err != nil {
					b.Fatal(err)
				}
				awaitSearch(e)
				seededEnvs[n] = e
				return e, e.act(mustPrincipal(b, e, "acme", "alice"), "")
			}
		}
		e = benchEnv(b, dir)
		t := e.t
		e.principal("acme", "alice", []string{"user"}, nil, nil)
		alice := e.act(mustPrincipal(t, e, "acme", "alice"), "")
		rememberAll(b, e, alice, n, func(i int) custody.Candidate {
			return custody.Candidate{Namespace: "bench", Key: "k" + strconv.Itoa(i), Class: "fact", Body: body(i), Channel: "user"}
		})
		embedSeeded(b, e) // bench_hybrid_test.go
		// A server tidies its indexes whenever it is idle; measure that state.
		if err := e.store.Tidy(e.ctx); err != nil {
			b.Fatal(err)
		}
		if cache != "" {
			keepSeed(b, e, dir, cache)
		}
		awaitSearch(e)
		seededEnvs[n] = e
	}
	return e, e.act(mustPrincipal(b, e, "acme", "alice"), "")
}

// awaitSearch builds the store's copy of the search index in memory, as
// serve does as it starts, and waits for it (CUSTODY_BENCH_VERBOSE=1
// prints how long that took).
func awaitSearch(e *env) {
	start := time.Now()
	e.store.PrepareSearch()
	e.store.AwaitSearchIndex()
	if os.Getenv("CUSTODY_BENCH_VERBOSE") != "" {
		records, bytes, _, _ := e.store.SearchIndexStats()
		fmt.Fprintf(os.Stderr, "search index copy: %d records, %.1f MB, built in %v\n", records, float64(bytes)/1e6, time.Since(start))
	}
}

// settle brings the store to where an idle server's would be a moment
// after a burst of writes: search indexes tidied and the WAL checkpointed,
// so reads find pages in the database file rather than in the WAL.
func settle(b *testing.B, e *env) {
	if err := e.store.Tidy(e.ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := e.store.DB().ExecContext(e.ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		b.Fatal(err)
	}
}

// rememberAll writes candidate(i) for i < n from 16 concurrent writers,
// whose writes share commits.
func rememberAll(b *testing.B, e *env, c *custody.Caller, n int, candidate func(i int) custody.Candidate) {
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 16 {
				if _, err := e.svc.Remember(e.ctx, c, candidate(i)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

// keepSeed copies a seeded store (compacted by VACUUM INTO) and the files
// beside it from dir into cache.
func keepSeed(b *testing.B, e *env, dir, cache string) {
	tmp := cache + ".tmp"
	os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		b.Fatal(err)
	}
	if _, err := e.store.DB().ExecContext(e.ctx, `VACUUM INTO ?`, filepath.Join(tmp, "custody.db")); err != nil {
		b.Fatal(err)
	}
	// The database is copied above; the key, registry and checkpoint copy here.
	err := copyFiles(dir, tmp, func(n string) bool { return !strings.HasPrefix(n, "custody.db") || strings.HasSuffix(n, ".checkpoint") })
	if err == nil {
		err = os.Rename(tmp, cache)
	}
	if err != nil {
		b.Fatal(err)
	}
}

// copyFiles copies the files of directory from that pass keep into to,
// readable by their owner only (the server key must be). A file is
// streamed, not read whole: a seeded store of a million records is a
// gigabyte, which the benchmark's process would otherwise hold once, and
// its Sys and RSS report ever after.
func copyFiles(from, to string, keep func(name string) bool) error {
	ents, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	for _, f := range ents {
		if keep(f.Name()) {
			if err := copyOneFile(filepath.Join(from, f.Name()), filepath.Join(to, f.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// copyOneFile copies file from to a new file to, readable by its owner
// only.
func copyOneFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// timed runs op b.N times, timing each call, and reports p50 and p99 next
// to the mean.
func timed(b *testing.B, op func(i int) error) {
	ds := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	cpu0 := storetest.ProcessCPU()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if err := op(i); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(t0))
	}
	b.StopTimer()
	if cpu := storetest.ProcessCPU() - cpu0; cpu > 0 && b.N > 0 {
		// The process's CPU, background work included: what the call
		// costs a machine serving many at once.
		b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
	}
	slices.Sort(ds)
	if len(ds) == 0 {
		return
	}
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds()), "p99-µs")
}
