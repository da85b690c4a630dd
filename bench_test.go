package custody_test

import (
	"bytes"
	"errors"
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
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/storetest"
)

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

func BenchmarkRemember(b *testing.B) {
	e, alice := seeded(b, benchRecords(b))
	timed(b, func(i int) error {
		if _, err := e.svc.Remember(e.ctx, alice, custody.Candidate{Namespace: "bench", Class: "episode", Body: body(i), Channel: "user"}); err != nil {
			b.Fatal(err)
		}
		return nil
	})
}

// BenchmarkRememberKeyed writes a new version of an existing key (a user
// updating a fact): the key's current and newest versions are read, and the
// previous version stops being the one in force.
func BenchmarkRememberKeyed(b *testing.B) {
	n := benchRecords(b)
	e, alice := seeded(b, n)
	timed(b, func(i int) error {
		d, err := e.svc.Remember(e.ctx, alice, custody.Candidate{Namespace: "bench", Key: "k" + strconv.Itoa(i*7919%n), Class: "fact", Body: body(i), Channel: "user"})
		if err == nil && d.State != custody.StateAdmitted {
			b.Fatalf("overwrite of k%d: %s", i*7919%n, d.State)
		}
		return err
	})
}

func BenchmarkGet(b *testing.B) {
	e, alice := seeded(b, benchRecords(b))
	p, err := e.svc.List(e.ctx, alice, custody.ListInput{Limit: 500})
	if err != nil {
		b.Fatal(err)
	}
	timed(b, func(i int) error {
		if _, err := e.svc.Get(e.ctx, alice, p.Items[i%len(p.Items)].ID); err != nil {
			b.Fatal(err)
		}
		return nil
	})
}

// BenchmarkRecallKey lists a key's value in force (namespace and key
// given), for keys spread over the whole store: the oldest are as far from
// the newest records as the store is large.
func BenchmarkRecallKey(b *testing.B) {
	n := benchRecords(b)
	e, alice := seeded(b, n)
	timed(b, func(i int) error {
		k := "k" + strconv.Itoa(i*7919%n)
		p, err := e.svc.List(e.ctx, alice, custody.ListInput{Namespace: "bench", Key: k})
		if err != nil || len(p.Items) != 1 || p.Items[0].Key != k {
			b.Fatal(err, p)
		}
		return nil
	})
}

// BenchmarkListSparse lists the newest records of a subject who owns 20
// records in a tenant whose other user owns the seeded ones.
func BenchmarkListSparse(b *testing.B) {
	e, alice := seeded(b, benchRecords(b))
	if _, _, err := e.svc.AddPrincipal(e.ctx, custody.PrincipalInput{Tenant: "acme", Name: "carol", Roles: []string{"user"}}); err != nil && !errors.Is(err, custody.ErrConflict) {
		b.Fatal(err)
	}
	carol := e.act(mustPrincipal(b, e, "acme", "carol"), "")
	page, err := e.svc.List(e.ctx, carol, custody.ListInput{})
	if err != nil {
		b.Fatal(err)
	}
	for i := len(page.Items); i < 20; i++ {
		// Older than most of alice's records: interleave them by writing
		// alice's next records after.
		e.remember(carol, custody.Candidate{Namespace: "c", Class: "fact", Body: body(i), Channel: "user"})
		e.remember(alice, custody.Candidate{Namespace: "bench", Class: "fact", Body: body(i), Channel: "user"})
	}
	timed(b, func(i int) error {
		p, err := e.svc.List(e.ctx, carol, custody.ListInput{Limit: 50})
		if err != nil || len(p.Items) != 20 {
			b.Fatal(err, len(p.Items))
		}
		return nil
	})
}

func BenchmarkSearch(b *testing.B) {
	e, alice := seeded(b, benchRecords(b))
	_, bytes, _, _ := e.store.SearchIndexStats()
	b.ReportMetric(float64(bytes)/1e6, "index-MB") // the copy in memory
	timed(b, func(i int) error {
		hits, err := e.svc.Search(e.ctx, alice, custody.SearchInput{Query: term(i*7919) + " " + term((i+1)*7919+104729)})
		if err != nil || len(hits) == 0 {
			b.Fatal(err, len(hits))
		}
		return nil
	})
}

// BenchmarkSearchAfterWrite times a search that follows a write, as an
// agent searching right after it remembers something: the write's record
// waits for the search indexes, and the search moves it in first.
func BenchmarkSearchAfterWrite(b *testing.B) {
	e, alice := seeded(b, benchRecords(b))
	ds := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		e.remember(alice, custody.Candidate{Namespace: "bench", Class: "episode", Body: body(i), Channel: "user"})
		b.StartTimer()
		t0 := time.Now()
		hits, err := e.svc.Search(e.ctx, alice, custody.SearchInput{Query: term(i*7919) + " " + term((i+1)*7919+104729)})
		if err != nil || len(hits) == 0 {
			b.Fatal(err, len(hits))
		}
		ds = append(ds, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds()), "p99-µs")
}

func BenchmarkGate(b *testing.B) {
	e, alice := seeded(b, benchRecords(b))
	if _, _, err := e.svc.AddPrincipal(e.ctx, custody.PrincipalInput{Tenant: "acme", Name: "harness", Roles: []string{"agent"}, Channels: []string{"agent", "tool:email"}}); err != nil && !errors.Is(err, custody.ErrConflict) {
		b.Fatal(err)
	}
	h := e.act(mustPrincipal(b, e, "acme", "harness"), "alice")
	page, err := e.svc.List(e.ctx, alice, custody.ListInput{Namespace: "bank", Key: "payee_account"})
	if err != nil {
		b.Fatal(err)
	}
	if len(page.Items) == 0 {
		e.remember(alice, custody.Candidate{Namespace: "bank", Key: "payee_account", Class: "fact", Body: "ACCT-1042", Channel: "user"})
		page, _ = e.svc.List(e.ctx, alice, custody.ListInput{Namespace: "bank", Key: "payee_account"})
	}
	pay := page.Items[0]
	s, _ := e.svc.OpenSession(e.ctx, h)
	for i := range 50 {
		e.svc.Observe(e.ctx, h, s.ID, custody.ObservationInput{Channel: "tool:email", Text: body(i)})
	}
	// Her request backs the amount (positive provenance).
	if _, err := e.svc.Observe(e.ctx, alice, s.ID, custody.ObservationInput{Channel: "user", Text: "Pay the 10 EUR fee to my payee."}); err != nil {
		b.Fatal(err)
	}
	timed(b, func(i int) error {
		d, err := e.svc.Gate(e.ctx, h, custody.GateInput{Action: "send_money", Args: map[string]any{"recipient": "ACCT-1042", "amount": 10}, Justification: []string{pay.ID}, Session: s.ID})
		if err != nil || d.Decision != custody.GateAllow {
			b.Fatal(err, d)
		}
		return nil
	})
}

// BenchmarkCascade quarantines the root of a DAG with n derived
// descendants; one op is one quarantine. The DAG is built once by 16
// writers (and kept under CUSTODY_BENCH_SEEDS when set); each run starts
// from a copy of its files, settled, so -benchtime 5x measures five
// cascades for the price of one build.
func BenchmarkCascade(b *testing.B) {
	b.StopTimer()
	seed, root := cascadeSeed(b, benchRecords(b))
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := benchDir(b)
		if err := copyFiles(seed, dir, func(string) bool { return true }); err != nil {
			b.Fatal(err)
		}
		e := newEnvAt(keepTB{b}, dir, custody.Options{})
		rev := e.act(mustPrincipal(b, e, "acme", "rev"), "")
		settle(b, e)
		b.StartTimer()
		ids, err := e.svc.Quarantine(e.ctx, rev, root, "")
		b.StopTimer()
		if err != nil || len(ids) != benchRecords(b)+1 {
			b.Fatal(err, len(ids))
		}
		e.store.Close()
		os.RemoveAll(dir)
	}
}

// cascadeSeeds holds the built DAG of each size for this process.
var cascadeSeeds = map[int][2]string{}

// cascadeSeed returns the directory of a store whose root record has n
// derived children, and the root's id.
func cascadeSeed(b *testing.B, n int) (dir, root string) {
	if s, ok := cascadeSeeds[n]; ok {
		return s[0], s[1]
	}
	cache := os.Getenv("CUSTODY_BENCH_SEEDS")
	if cache == "" {
		cache = benchDir(b)
	}
	dir = filepath.Join(cache, "cascade-"+strconv.Itoa(n))
	if id, err := os.ReadFile(filepath.Join(dir, "root")); err == nil {
		cascadeSeeds[n] = [2]string{dir, string(id)}
		return dir, string(id)
	}
	tmp := dir + ".tmp"
	os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		b.Fatal(err)
	}
	e := newEnvAt(keepTB{b}, tmp, custody.Options{})
	alice := e.act(e.principal("acme", "alice", []string{"user"}, nil, nil), "")
	e.principal("acme", "rev", []string{"reviewer"}, nil, nil)
	r, err := e.svc.Remember(e.ctx, alice, custody.Candidate{Namespace: "c", Class: "episode", Body: "root", Channel: "user"})
	if err != nil {
		b.Fatal(err)
	}
	rememberAll(b, e, alice, n, func(j int) custody.Candidate {
		return custody.Candidate{Namespace: "c", Class: "episode", Body: body(j), Channel: "user",
			DerivedFrom: []custody.Edge{{ID: r.ID, Weight: 1}}}
	})
	settle(b, e)
	if err := e.store.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "root"), []byte(r.ID), 0o600); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		b.Fatal(err)
	}
	cascadeSeeds[n] = [2]string{dir, r.ID}
	return dir, r.ID
}

// BenchmarkLineageDepth50 reads the lineage of the tip of a 50-deep chain.
func BenchmarkLineageDepth50(b *testing.B) {
	e := benchEnv(b, "")
	alice := e.act(e.principal("acme", "alice", []string{"user"}, nil, nil), "")
	prev := e.remember(alice, custody.Candidate{Namespace: "l", Class: "episode", Body: "root", Channel: "user"})
	for i := range 50 {
		prev = e.remember(alice, custody.Candidate{Namespace: "l", Class: "episode", Body: body(i), Channel: "user",
			DerivedFrom: []custody.Edge{{ID: prev.ID, Weight: 1}}})
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		lin, err := e.svc.Lineage(e.ctx, alice, prev.ID)
		if err != nil || len(lin.Ancestors) != 50 {
			b.Fatal(err)
		}
	}
}

// BenchmarkExportRestore exports the seeded tenant and restores it into an
// empty store; one op is one export plus one restore.
func BenchmarkExportRestore(b *testing.B) {
	e, _ := seeded(b, benchRecords(b))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var buf bytes.Buffer
		if _, err := e.svc.Export(e.ctx, "acme", &buf); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		st, err := sqlite.Open(e.ctx, filepath.Join(b.TempDir(), "r.db"))
		if err != nil {
			b.Fatal(err)
		}
		fresh, err := custody.New(st, e.svc.ServerKey(), custody.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		rep, err := fresh.Restore(e.ctx, buf.Bytes(), nil)
		if err != nil || rep.Restored < benchRecords(b) {
			b.Fatal(err, rep)
		}
		b.StopTimer()
		st.Close()
		b.StartTimer()
	}
}

// BenchmarkVerify runs a full verify of the seeded store.
func BenchmarkVerify(b *testing.B) {
	e, _ := seeded(b, benchRecords(b))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := e.svc.Verify(e.ctx, custody.VerifyOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInclusionProof proves a random leaf of the seeded store's log
// (about CUSTODY_BENCH_RECORDS entries) against the whole tree.
func BenchmarkInclusionProof(b *testing.B) {
	e, _ := seeded(b, benchRecords(b))
	size, err := e.store.LogSize(e.ctx, "acme")
	if err != nil {
		b.Fatal(err)
	}
	timed(b, func(i int) error {
		if _, err := e.svc.InclusionProof(e.ctx, "acme", uint64(i*7919)%size, size); err != nil {
			b.Fatal(err)
		}
		return nil
	})
}

// BenchmarkConsistencyProof proves that a random earlier tree is a prefix
// of the whole one.
func BenchmarkConsistencyProof(b *testing.B) {
	e, _ := seeded(b, benchRecords(b))
	size, err := e.store.LogSize(e.ctx, "acme")
	if err != nil {
		b.Fatal(err)
	}
	timed(b, func(i int) error {
		if _, err := e.svc.ConsistencyProof(e.ctx, "acme", 1+uint64(i*7919)%(size-1), size); err != nil {
			b.Fatal(err)
		}
		return nil
	})
}
