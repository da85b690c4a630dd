package custody_test

import (
	"fmt"
	"os"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/embed"
)

// benchEmbedder is the embedder of the benchmarks' services: the built-in
// one when CUSTODY_BENCH_EMBEDDER=builtin (glove with =glove), else none, so that
// BenchmarkRemember measures a write with and without the embedding
// worker beside it:
//
//	go test -run x -bench 'BenchmarkRemember$' -benchtime 2000x .
//	CUSTODY_BENCH_EMBEDDER=builtin go test -run x -bench 'BenchmarkRemember$' -benchtime 2000x .
func benchEmbedder(b *testing.B) embed.Embedder {
	switch v := os.Getenv("CUSTODY_BENCH_EMBEDDER"); v {
	case "":
		return nil
	case embed.ProviderBuiltin, embed.ProviderGlove:
		e, err := embed.New(embed.Config{Provider: v})
		if err != nil {
			b.Fatal(err)
		}
		return e
	default:
		b.Fatalf("CUSTODY_BENCH_EMBEDDER=%q: use builtin or glove, or leave it unset", v)
	}
	return nil
}

// startBenchEmbedding runs e's embedding worker, as serve does, and
// returns what stops it.
func startBenchEmbedding(b *testing.B, e *env) func() {
	w := e.svc.StartEmbedding(custody.EmbedWorkerOptions{OnError: func(err error) { b.Error(err) }})
	return w.Close
}

// embedSeeded brings the vectors of a seeded store up to date, as an idle
// server's worker would, when the benchmarks have an embedder (the
// built-in one stores none: nothing to do).
func embedSeeded(b *testing.B, e *env) {
	if os.Getenv("CUSTODY_BENCH_EMBEDDER") == "" {
		return
	}
	if _, err := e.svc.EmbedPending(e.ctx); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkSearchHybrid and BenchmarkSearchSemantic time a search of the
// seeded store with the built-in embedder (its semantic list from the
// lexical index, the candidates scored from their texts, fused with the
// lexical list in hybrid mode; docs/search.md). Run:
//
//	CUSTODY_BENCH_EMBEDDER=builtin CUSTODY_BENCH_RECORDS=100000 go test -run x -bench 'Search(Hybrid|Semantic)$' -benchtime 200x .
func BenchmarkSearchHybrid(b *testing.B) { benchSearchMode(b, custody.ModeHybrid, "") }

func BenchmarkSearchSemantic(b *testing.B) { benchSearchMode(b, custody.ModeSemantic, "") }

// BenchmarkSearchHybridBroad is BenchmarkSearchHybrid with a word every
// record holds ("note") before the two terms, as a query of everyday
// words has: the semantic list's candidates are then the best 400 of
// every record rather than the few hundred that hold a term.
func BenchmarkSearchHybridBroad(b *testing.B) { benchSearchMode(b, custody.ModeHybrid, "note ") }

func benchSearchMode(b *testing.B, mode custody.SearchMode, prefix string) {
	if os.Getenv("CUSTODY_BENCH_EMBEDDER") == "" {
		b.Skip("set CUSTODY_BENCH_EMBEDDER=builtin")
	}
	e, alice := seeded(b, benchRecords(b))
	settle(b, e)
	timed(b, func(i int) error {
		res, err := e.svc.SearchRanked(e.ctx, alice, custody.SearchInput{Query: prefix + term(i*7919) + " " + term((i+1)*7919+104729), Mode: mode})
		if err != nil || len(res.Items) == 0 || res.Mode != mode {
			b.Fatal(err, res)
		}
		return nil
	})
	if os.Getenv("CUSTODY_BENCH_VERBOSE") != "" {
		records, bytes, kept, read := e.store.SearchTextsStats()
		fmt.Fprintf(os.Stderr, "texts kept: %d records, %.1f MB; %d records taken from them, %d read from their rows\n", records, float64(bytes)/1e6, kept, read)
	}
}
