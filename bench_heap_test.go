package custody_test

import (
	"os"
	"runtime"
	"runtime/pprof"
	"testing"

	custody "github.com/custody-mem/custody"
)

// BenchmarkHeapServing reports the live heap of a service over the seeded
// store (CUSTODY_BENCH_RECORDS records) after it has served searches of
// the default mode (hybrid with CUSTODY_BENCH_EMBEDDER set): the copy of
// the search index, its lexical maps and metadata hashes, the texts kept
// beside it, the store's caches and whatever else a serving process
// keeps, measured with
// runtime.ReadMemStats after a collection. SQLite's page cache and mmap
// live outside Go's heap and are not counted (Sys and the process's RSS
// are reported beside). CUSTODY_BENCH_HEAPPROFILE=FILE writes a heap
// profile (go tool pprof -sample_index=inuse_space FILE). Run:
//
//	CUSTODY_BENCH_SEEDS=DIR CUSTODY_BENCH_RECORDS=1000000 go test -run '^$' -bench 'HeapServing$' -benchtime 200x -timeout 0 .
func BenchmarkHeapServing(b *testing.B) {
	e, alice := seeded(b, benchRecords(b))
	i := 0
	for b.Loop() {
		// The default mode, as serve's /v1/search: hybrid with an
		// embedder (CUSTODY_BENCH_EMBEDDER), lexical without.
		res, err := e.svc.SearchRanked(e.ctx, alice, custody.SearchInput{Query: term(i*7919) + " " + term((i+1)*7919+104729)})
		if err != nil || len(res.Items) == 0 {
			b.Fatal(err, res)
		}
		i++
	}
	b.StopTimer()
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	if path := os.Getenv("CUSTODY_BENCH_HEAPPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
	_, index, _, _ := e.store.SearchIndexStats()
	_, texts, _, _ := e.store.SearchTextsStats()
	b.ReportMetric(float64(texts)/(1<<20), "texts-MiB")
	b.ReportMetric(float64(m.HeapAlloc)/(1<<20), "heap-MiB")
	b.ReportMetric(float64(m.HeapInuse)/(1<<20), "inuse-MiB")
	b.ReportMetric(float64(m.Sys)/(1<<20), "sys-MiB")
	b.ReportMetric(float64(index)/(1<<20), "index-MiB")
	b.ReportMetric(float64(rssBytes())/(1<<20), "rss-MiB")
}

// rssBytes is the resident set of this process (0 where /proc is not).
func rssBytes() int64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	var size, rss int64
	for i, f := 0, 0; i < len(data) && f < 2; i++ {
		c := data[i]
		switch {
		case c == ' ':
			f++
		case f == 0:
			size = size*10 + int64(c-'0')
		default:
			rss = rss*10 + int64(c-'0')
		}
	}
	return rss * int64(os.Getpagesize())
}
