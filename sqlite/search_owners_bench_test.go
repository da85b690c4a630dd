package sqlite_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/storetest"
	"github.com/oklog/ulid/v2"
)

// BenchmarkSearchOneOfManyOwners searches, as one user, a store whose
// CUSTODY_BENCH_RECORDS records (20,000 by default) of the common
// vocabulary belong to 100 users, each the only one who may read them,
// as a tenant of many users holds them: a query's words match about 1.2%
// of the store per word, and one in a hundred of those matches is the
// caller's. With the copy of the index in memory the ranking keeps the
// caller's own records only ("memory"); FTS5 scores every match and
// checks each one's eligibility ("fts5").
func BenchmarkSearchOneOfManyOwners(b *testing.B) {
	n := storetest.BenchRecords(b, 20000)
	for _, mode := range []struct {
		name   string
		memory int64
	}{{"memory", 0}, {"fts5", -1}} {
		b.Run(mode.name, func(b *testing.B) {
			s, err := sqlite.OpenWith(b.Context(), filepath.Join(b.TempDir(), "c.db"), sqlite.Options{SearchMemory: mode.memory})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			rng := rand.New(rand.NewPCG(1, 2))
			entropy := ulid.Monotonic(rand.NewChaCha8([32]byte{3}), 0)
			for done := 0; done < n; done += 1000 {
				err := s.Update(b.Context(), func(tx custody.Tx) error {
					for i := done; i < min(done+1000, n); i++ {
						at := storetest.Start.Add(time.Duration(i) * time.Millisecond)
						owner := fmt.Sprintf("u%d", i%100)
						r := &custody.Record{ID: ulid.MustNew(ulid.Timestamp(at), entropy).String(), Tenant: "acme", Owner: owner,
							Namespace: "bench", Class: custody.ClassFact, Body: storetest.Common.Query(rng.IntN(1<<20)) + " " + storetest.Common.Query(rng.IntN(1<<20)) + " " + storetest.Common.Query(rng.IntN(1<<20)),
							Channel: custody.ChannelUser, Writer: "acme/" + owner, Authority: custody.AuthorityUser, Audience: custody.AudienceOwner,
							State: custody.StateAdmitted, CreatedAt: at, Version: 1, Parents: []custody.Edge{}}
						if err := tx.InsertRecord(b.Context(), r); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			if err := s.Tidy(b.Context()); err != nil {
				b.Fatal(err)
			}
			s.PrepareSearch()
			s.AwaitSearchIndex()
			sc := custody.Scope{Tenant: "acme", Subject: "u7", Now: storetest.Start.Add(time.Hour)}
			found := 0
			b.ResetTimer()
			for i := range b.N {
				hits, err := s.Search(b.Context(), sc, custody.SearchQuery{Text: storetest.Common.Query(i), Limit: 10})
				if err != nil {
					b.Fatal(err)
				}
				found += len(hits)
			}
			if found == 0 {
				b.Fatal("no search found anything")
			}
		})
	}
}
