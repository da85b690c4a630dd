package custody_test

import (
	"fmt"
	"math"
	"os"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
)

// Burst settings: the writes of one burst (by rememberAll's 16 writers),
// the searchers running at once, and how long searches are timed after
// it.
const (
	burstWrites    = 20000
	burstSearchers = 8
	burstAfter     = 5 * time.Second
)

// BenchmarkSearchDuringBurst times hybrid searches (the built-in
// embedder) of 8 concurrent searchers for 5 s at rest, then while 16
// writers write a burst of 20,000 records into the seeded store, and for
// 5 s after the last write is acknowledged: what a client sees right
// after a bulk load, beside what the same searchers see at rest. It
// reports p50 and p99 of the searches at rest, during the burst and after
// it, the burst's writes/s, and the share of rankings made with FTS5
// rather than the in-memory copy of the search index. Each iteration is one burst (the store grows by
// 20,000 records). Run, for the 100k store (a few minutes the first time;
// CUSTODY_BENCH_SEEDS keeps the seeded store):
//
//	CUSTODY_BENCH_SEEDS=DIR CUSTODY_BENCH_EMBEDDER=builtin CUSTODY_BENCH_RECORDS=100000 go test -run '^$' -bench 'SearchDuringBurst$' -benchtime 1x -timeout 0 .
//
// CUSTODY_BENCH_MODE=lexical (or semantic) times that mode instead of
// hybrid.
func BenchmarkSearchDuringBurst(b *testing.B) {
	if os.Getenv("CUSTODY_BENCH_EMBEDDER") == "" {
		b.Skip("set CUSTODY_BENCH_EMBEDDER=builtin")
	}
	mode := custody.SearchMode(os.Getenv("CUSTODY_BENCH_MODE"))
	if mode == "" {
		mode = custody.ModeHybrid
	}
	n := benchRecords(b)
	e, alice := seeded(b, n)
	settle(b, e)
	var rest, during, after []time.Duration
	writes, writing := 0, time.Duration(0)
	next := n
	_, _, copy0, fts0 := e.store.SearchIndexStats()
	b.ResetTimer()
	for range b.N {
		var mu sync.Mutex
		var samples []burstSample
		stop := make(chan struct{})
		if os.Getenv("CUSTODY_BENCH_VERBOSE") != "" {
			go watchGC(stop)
		}
		var searchers sync.WaitGroup
		for s := range burstSearchers {
			searchers.Go(func() {
				for k := s; ; k += burstSearchers {
					select {
					case <-stop:
						return
					default:
					}
					t0 := time.Now()
					res, err := e.svc.SearchRanked(e.ctx, alice, custody.SearchInput{Query: term(k*7919) + " " + term((k+1)*7919+104729), Mode: mode})
					d := time.Since(t0)
					if err != nil || res.Mode != mode {
						b.Error(err, res)
						return
					}
					mu.Lock()
					samples = append(samples, burstSample{t0.Add(d), d})
					mu.Unlock()
				}
			})
		}
		time.Sleep(burstAfter) // the searches at rest, before the burst
		start := time.Now()
		first := next
		rememberAll(b, e, alice, burstWrites, func(i int) custody.Candidate {
			j := first + i
			return custody.Candidate{Namespace: "bench", Key: "k" + strconv.Itoa(j), Class: "fact", Body: body(j), Channel: "user"}
		})
		end := time.Now()
		next += burstWrites
		writes += burstWrites
		writing += end.Sub(start)
		if f := os.Getenv("CUSTODY_BENCH_AFTER_PROFILE"); f != "" {
			profileFor(b, f, burstAfter)
		} else {
			time.Sleep(burstAfter)
		}
		close(stop)
		searchers.Wait()
		if os.Getenv("CUSTODY_BENCH_VERBOSE") != "" {
			printTimeline(start, end, samples)
		}
		for _, s := range samples {
			switch {
			case s.at.Before(start):
				rest = append(rest, s.d)
			case s.at.Before(end):
				during = append(during, s.d)
			case s.at.Sub(end) <= burstAfter:
				after = append(after, s.d)
			}
		}
	}
	b.StopTimer()
	report := func(ds []time.Duration, name string) {
		if len(ds) == 0 {
			return
		}
		slices.Sort(ds)
		b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, name+"-p50-ms")
		b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds())/1000, name+"-p99-ms")
		b.ReportMetric(float64(len(ds))/float64(b.N), name+"-searches")
	}
	report(rest, "rest")
	report(during, "during")
	report(after, "after")
	b.ReportMetric(float64(writes)/writing.Seconds(), "writes/s")
	_, _, copy1, fts1 := e.store.SearchIndexStats()
	if ranked := copy1 - copy0 + fts1 - fts0; ranked > 0 {
		b.ReportMetric(100*float64(fts1-fts0)/float64(ranked), "%ranked-by-FTS5")
	}
}

// burstSample is a search that ended at at, after d.
type burstSample struct {
	at time.Time
	d  time.Duration
}

// gcAt are the times the collector's cycle count was seen to grow
// (watchGC, with CUSTODY_BENCH_VERBOSE).
var (
	gcMu sync.Mutex
	gcAt []time.Time
)

// watchGC notes, every millisecond until stop, when a collection ended.
func watchGC(stop <-chan struct{}) {
	m := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	last := uint64(0)
	for {
		select {
		case <-stop:
			return
		case <-time.After(time.Millisecond):
		}
		metrics.Read(m)
		if n := m[0].Value.Uint64(); n != last {
			gcMu.Lock()
			gcAt = append(gcAt, time.Now())
			gcMu.Unlock()
			last = n
		}
	}
}

// printTimeline prints, for each half second of the run, the searches
// that ended in it (count, p50, p99, max) and the collections seen,
// relative to the burst's start and end.
func printTimeline(start, end time.Time, samples []burstSample) {
	const window = 500 * time.Millisecond
	win := func(t time.Time) int { return int(math.Floor(float64(t.Sub(start)) / float64(window))) }
	byWin := map[int][]time.Duration{}
	first, last := 0, 0
	for _, s := range samples {
		w := win(s.at)
		byWin[w] = append(byWin[w], s.d)
		first, last = min(first, w), max(last, w)
	}
	gcMu.Lock()
	gcs := map[int]int{}
	for _, t := range gcAt {
		gcs[win(t)]++
	}
	gcAt = nil
	gcMu.Unlock()
	for w := first; w <= last; w++ {
		ds := byWin[w]
		phase := "rest"
		if t := start.Add(time.Duration(w) * window); !t.Before(end) {
			phase = "after"
		} else if !t.Before(start) {
			phase = "during"
		}
		if len(ds) == 0 {
			fmt.Fprintf(os.Stderr, "%+6.1fs %-6s      0 searches                               gc %d\n", float64(w)/2, phase, gcs[w])
			continue
		}
		slices.Sort(ds)
		fmt.Fprintf(os.Stderr, "%+6.1fs %-6s %6d searches p50 %6.1f p99 %6.1f max %6.1f ms gc %d\n", float64(w)/2, phase, len(ds),
			ms(ds[len(ds)/2]), ms(ds[len(ds)*99/100]), ms(ds[len(ds)-1]), gcs[w])
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// profileFor writes a CPU profile of the next d to file.
func profileFor(b *testing.B, file string, d time.Duration) {
	f, err := os.Create(file)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	time.Sleep(d)
	pprof.StopCPUProfile()
}
