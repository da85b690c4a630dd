package postgres_test

import (
	"fmt"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/storetest"
)

// BenchmarkRememberBatch is a bulk import on PostgreSQL, in process: b.N
// batches of custody.MaxBatch admitted user facts (RememberBatch, what
// POST /v1/memories/batch and `custody import` run), each a new key
// (keyed) or without keys (keyless). ns/op is a batch; records/s the rate.
func BenchmarkRememberBatch(b *testing.B) {
	b.Run("keyed", func(b *testing.B) { benchRememberBatch(b, true) })
	b.Run("keyless", func(b *testing.B) { benchRememberBatch(b, false) })
}

func benchRememberBatch(b *testing.B, keyed bool) {
	svc, p, _ := benchService(b, open(b), "alice")
	alice := &custody.Caller{Principal: p, Subject: p}
	next := 0
	batch := func() []custody.Candidate {
		in := make([]custody.Candidate, custody.MaxBatch)
		for i := range in {
			next++
			in[i] = custody.Candidate{Namespace: "import", Class: custody.ClassFact, Channel: "user",
				Body: fmt.Sprintf("imported fact %d about %s", next, storetest.Varied.Query(next))}
			if keyed {
				in[i].Key = fmt.Sprintf("k%d", next)
			}
		}
		return in
	}
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		in := batch()
		ds, err := svc.RememberBatch(b.Context(), alice, in)
		if err != nil || len(ds) != len(in) {
			b.Fatalf("%d decisions, %v", len(ds), err)
		}
	}
	b.ReportMetric(float64(b.N*custody.MaxBatch)/time.Since(start).Seconds(), "records/s")
}
