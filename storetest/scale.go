package storetest

import (
	"math"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
)

// Client goroutines of BenchScale, spread round-robin over the servers.
const (
	scaleWriters   = 16
	scaleSearchers = 8
)

// BenchScale measures admitted writes and searches from concurrent clients
// among CUSTODY_BENCH_RECORDS records (default DefaultBenchRecords). open
// returns one store per custody server, each with its own connection pool,
// all over one fresh database; every server gets its own service, as
// separate processes would.
//
// The database is populated once and its duration logged (a parent
// benchmark's log shows only with go test -v); then the sub-benchmark Search runs
// scaleSearchers goroutines of two-word searches and Write runs
// scaleWriters goroutines of admitted user facts, b.N calls in all. Each
// reports calls per second and the p50 and p99 latency of one call.
// Search runs first so that it sees exactly the populated records.
func BenchScale(b *testing.B, open func(b *testing.B) []custody.Store) {
	n := BenchRecords(b, DefaultBenchRecords)
	stores := open(b)
	svcs := newServers(b, stores, NewClock(Start))
	p, _, err := svcs[0].AddPrincipal(b.Context(), custody.PrincipalInput{Tenant: "acme", Name: "alice", Roles: []string{"user"}, Groups: []string{"fin"}})
	if err != nil {
		b.Fatal(err)
	}
	alice := &custody.Caller{Principal: p, Subject: p}
	start := time.Now()
	Populate(b, stores[0], n)
	for _, st := range stores {
		PrepareSearch(st)
	}
	b.Logf("populated %d records in %v", n, time.Since(start).Round(time.Millisecond))
	b.Run("Search", func(b *testing.B) {
		benchScaleSearch(b, svcs, alice)
		b.ReportMetric(float64(n), "records")
	})
	b.Run("Write", func(b *testing.B) { benchScaleWrite(b, svcs, alice) })
	b.Run("SearchWhileWriting", func(b *testing.B) {
		benchSearchWhileWriting(b, svcs, alice)
		b.ReportMetric(float64(n), "records")
	})
}

// benchSearchWhileWriting runs the searches of Search on the last server
// while scaleWriters goroutines write through the first (the same one,
// with one server) without pause, and reports the searches and the
// writes made meanwhile: with two servers, every search follows writes
// another server made (a copy of the search terms in memory catches up
// with them first).
func benchSearchWhileWriting(b *testing.B, svcs []*custody.Service, alice *custody.Caller) {
	stop := make(chan struct{})
	var wrote atomic.Int64
	var writers sync.WaitGroup
	rngs := goroutineRNGs(scaleWriters, 5)
	for g := range scaleWriters {
		writers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := svcs[0].Remember(b.Context(), alice, custody.Candidate{Namespace: "bench", Class: custody.ClassFact,
					Body: benchBody(rngs[g], 12), Channel: custody.ChannelUser}); err != nil {
					b.Error(err)
					return
				}
				wrote.Add(1)
			}
		})
	}
	start := time.Now()
	benchScaleSearch(b, svcs[len(svcs)-1:], alice)
	close(stop)
	writers.Wait()
	b.ReportMetric(float64(wrote.Load())/time.Since(start).Seconds(), "writes/s")
}

// BenchRecords is how many records a benchmark works among:
// CUSTODY_BENCH_RECORDS, or def when it is not set. A value that is not a
// positive number fails the benchmark rather than being ignored.
func BenchRecords(tb testing.TB, def int) int {
	v := os.Getenv("CUSTODY_BENCH_RECORDS")
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		tb.Fatalf("CUSTODY_BENCH_RECORDS=%q is not a positive number", v)
	}
	return n
}

// newServers returns one service per store. They share one server key, as
// servers of one deployment must: principals' keys are sealed under it and
// the log is verified against it.
func newServers(b *testing.B, stores []custody.Store, clock *Clock) []*custody.Service {
	first := NewService(b, stores[0], clock)
	pol, err := custody.ParsePolicy(policyText)
	if err != nil {
		b.Fatal(err)
	}
	svcs := []*custody.Service{first}
	for _, st := range stores[1:] {
		svc, err := custody.New(st, first.ServerKey(), custody.Options{Now: clock.Now, Policy: pol})
		if err != nil {
			b.Fatal(err)
		}
		svcs = append(svcs, svc)
	}
	return svcs
}

func benchScaleSearch(b *testing.B, svcs []*custody.Service, alice *custody.Caller) {
	rngs := goroutineRNGs(scaleSearchers, 3)
	var hits atomic.Int64
	lat, elapsed := Hammer(b, scaleSearchers, func(g int) error {
		rng := rngs[g]
		q := benchWords[rng.IntN(len(benchWords))] + " " + benchWords[rng.IntN(len(benchWords))]
		res, err := svcs[g%len(svcs)].Search(b.Context(), alice, custody.SearchInput{Query: q})
		hits.Add(int64(len(res)))
		return err
	})
	if hits.Load() == 0 {
		b.Fatal("no search found anything")
	}
	ReportCalls(b, lat, elapsed, "searches/s", "search")
}

func benchScaleWrite(b *testing.B, svcs []*custody.Service, alice *custody.Caller) {
	rngs := goroutineRNGs(scaleWriters, 1)
	lat, elapsed := Hammer(b, scaleWriters, func(g int) error {
		d, err := svcs[g%len(svcs)].Remember(b.Context(), alice, custody.Candidate{Namespace: "bench", Class: custody.ClassFact,
			Body: benchBody(rngs[g], 12), Channel: custody.ChannelUser})
		if err == nil && d.State != custody.StateAdmitted {
			b.Errorf("write %s: %s", d.ID, d.State)
		}
		return err
	})
	ReportCalls(b, lat, elapsed, "writes/s", "write")
}

// goroutineRNGs returns one generator per goroutine (a rand.Rand is not
// safe for concurrent use), seeded so that runs repeat.
func goroutineRNGs(goroutines int, seed uint64) []*rand.Rand {
	rngs := make([]*rand.Rand, goroutines)
	for g := range rngs {
		rngs[g] = rand.New(rand.NewPCG(seed, uint64(g)))
	}
	return rngs
}

// Hammer makes b.N calls of op in all from the given number of goroutines,
// passing each its index. The goroutines draw calls from one counter rather
// than a fixed share each, so that the wall time is not that of the
// unluckiest goroutine. It returns every call's latency and the wall time of
// all of them; it fails the benchmark if any call fails.
//
// It reports the process's CPU time (user and system) per call as
// cpu-µs/op: on a busy machine the wall time says little, and the CPU a
// call takes (the client's share included, for clients in the process)
// bounds the calls a 2-core machine can make a second. It reports the
// whole machine's as host-cpu-µs/op (HostCPU): on an otherwise idle
// machine, the process's and its database server's together. With
// CUSTODY_BENCH_CPUPROFILE=FILE the calls alone are profiled into FILE (go
// test's -cpuprofile covers the seeding as well).
func Hammer(b *testing.B, goroutines int, op func(g int) error) ([]time.Duration, time.Duration) {
	var next atomic.Int64
	lats := make([][]time.Duration, goroutines)
	var wg sync.WaitGroup
	if path := os.Getenv("CUSTODY_BENCH_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			b.Fatalf("CUSTODY_BENCH_CPUPROFILE: %v", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			b.Fatalf("CUSTODY_BENCH_CPUPROFILE: %v (drop go test's -cpuprofile)", err)
		}
		defer func() {
			pprof.StopCPUProfile()
			f.Close()
		}()
	}
	b.ResetTimer()
	cpu0, host0 := ProcessCPU(), HostCPU()
	start := time.Now()
	for g := range goroutines {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				t := time.Now()
				if err := op(g); err != nil {
					b.Error(err)
					return
				}
				lats[g] = append(lats[g], time.Since(t))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if cpu := ProcessCPU() - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
	}
	if host := HostCPU() - host0; host > 0 {
		b.ReportMetric(float64(host.Microseconds())/float64(b.N), "host-cpu-µs/op")
	}
	if b.Failed() {
		b.FailNow()
	}
	return slices.Concat(lats...), elapsed
}

// ReportCalls reports the calls per second under rate, and the p50 and p99
// latency in microseconds as name-p50-µs and name-p99-µs.
func ReportCalls(b *testing.B, lat []time.Duration, elapsed time.Duration, rate, name string) {
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), rate)
	slices.Sort(lat)
	for _, p := range []int{50, 99} {
		b.ReportMetric(float64(percentile(lat, p).Microseconds()), name+"-p"+strconv.Itoa(p)+"-µs")
	}
}

// percentile returns the nearest-rank p-th percentile of sorted.
func percentile(sorted []time.Duration, p int) time.Duration {
	i := int(math.Ceil(float64(p)/100*float64(len(sorted)))) - 1
	return sorted[max(i, 0)]
}
