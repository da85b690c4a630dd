package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/embed"
	"github.com/oklog/ulid/v2"
)

// DefaultBenchRecords is how many records BenchSearch searches unless the
// environment variable CUSTODY_BENCH_RECORDS says otherwise.
const DefaultBenchRecords = 10000

// BenchWrite measures admitted user writes through the service: policy,
// record, search rows, a signed log entry and its tree nodes, one
// transaction each.
func BenchWrite(b *testing.B, open func(b *testing.B) custody.Store) {
	store := open(b)
	clock := NewClock(Start)
	svc := NewService(b, store, clock)
	ctx := b.Context()
	p, _, err := svc.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: "alice", Roles: []string{"user"}})
	if err != nil {
		b.Fatal(err)
	}
	alice := &custody.Caller{Principal: p, Subject: p}
	rng := rand.New(rand.NewPCG(1, 2))
	i := 0
	start := time.Now()
	for b.Loop() {
		d, err := svc.Remember(ctx, alice, custody.Candidate{Namespace: "bench", Class: custody.ClassFact,
			Body: benchBody(rng, 12), Channel: custody.ChannelUser})
		if err != nil {
			b.Fatal(err)
		}
		if d.State != custody.StateAdmitted {
			b.Fatalf("write %d: %s", i, d.State)
		}
		i++
	}
	b.ReportMetric(float64(i)/time.Since(start).Seconds(), "writes/s")
}

// benchService is a service over store holding n records written as
// Populate writes them, and alice (tenant acme, group fin) as their
// subject: the state a server reaches a moment after such a load, the
// search indexes merged and the writer idle.
func benchService(b *testing.B, store custody.Store, n int) (*custody.Service, *custody.Caller) {
	ctx := b.Context()
	svc := NewService(b, store, NewClock(Start))
	p, _, err := svc.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: "alice", Roles: []string{"user"}, Groups: []string{"fin"}})
	if err != nil {
		b.Fatal(err)
	}
	Populate(b, store, n)
	PrepareSearch(store)
	if t, ok := store.(interface{ Tidy(context.Context) error }); ok {
		if err := t.Tidy(ctx); err != nil {
			b.Fatal(err)
		}
	}
	return svc, &custody.Caller{Principal: p, Subject: p}
}

// BenchSearch measures a two-word search for the top 10 (and the top
// 100: the depth of a hybrid search's lexical list) among
// CUSTODY_BENCH_RECORDS records (default DefaultBenchRecords) of which
// about half are eligible for the subject: the rest belong to another user,
// or are quarantined or retired. Its sub-benchmarks search every
// namespace, one of a tenth of the records, one of a thousandth (a
// common query then has fewer than ten eligible matches, so every match
// is looked at), a namespace prefix taking them all, the class of a
// hundredth, the last thousandth written (created_after), the key
// prefix of a thousandth, and the metadata of a thousandth.
func BenchSearch(b *testing.B, open func(b *testing.B) custody.Store) {
	n := BenchRecords(b, DefaultBenchRecords)
	svc, alice := benchService(b, open(b), n)
	ctx := b.Context()
	lastThousandth := Start.Add(time.Duration(n-n/1000) * time.Millisecond)
	for _, c := range []struct {
		name string
		in   custody.SearchInput
	}{
		{"ns=any", custody.SearchInput{}},
		{"ns=any/limit=100", custody.SearchInput{Limit: custody.MaxSearchLimit}},
		{"ns=tenth", custody.SearchInput{Namespace: TenthNamespace}},
		{"ns=thousandth", custody.SearchInput{Namespace: ThousandthNamespace}},
		{"prefix=bench", custody.SearchInput{NamespacePrefix: "bench"}},
		{"class=episode", custody.SearchInput{Class: custody.ClassEpisode}},
		{"created=last-thousandth", custody.SearchInput{Filters: custody.Filters{CreatedAfter: &lastThousandth}}},
		{"key=payee.", custody.SearchInput{Filters: custody.Filters{KeyPrefix: "payee."}}},
		{"meta=thousandth", custody.SearchInput{Filters: custody.Filters{Metadata: custody.Metadata{"project": ThousandthProject}}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(3, 4))
			hits := 0
			for b.Loop() {
				in := c.in
				in.Query = benchWords[rng.IntN(len(benchWords))] + " " + benchWords[rng.IntN(len(benchWords))]
				res, err := svc.Search(ctx, alice, in)
				if err != nil {
					b.Fatal(err)
				}
				hits += len(res)
			}
			if hits == 0 && b.N >= 10 {
				b.Fatal("no search found anything")
			}
			b.ReportMetric(float64(n), "records")
			b.ReportMetric(float64(hits)/float64(b.N), "hits/op")
		})
	}
}

// BenchSearchHybrid measures a two-word hybrid search for the top 10 with
// the default embedder (glove) among CUSTODY_BENCH_RECORDS records, as
// BenchSearch's ns=any: the lexical list, the semantic list's candidates
// read with their texts and scored, fused. It reports the process's CPU
// per search (the store's server's, PostgreSQL's, is not in it).
func BenchSearchHybrid(b *testing.B, open func(b *testing.B) custody.Store) {
	n := BenchRecords(b, DefaultBenchRecords)
	store := open(b)
	base, alice := benchService(b, store, n)
	emb, err := embed.NewGlove()
	if err != nil {
		b.Fatal(err)
	}
	pol, err := custody.ParsePolicy(policyText)
	if err != nil {
		b.Fatal(err)
	}
	svc, err := custody.New(store, base.ServerKey(), custody.Options{Now: NewClock(Start).Now, Policy: pol, Embedder: emb})
	if err != nil {
		b.Fatal(err)
	}
	ctx := b.Context()
	rng := rand.New(rand.NewPCG(3, 4))
	hits := 0
	cpu0 := ProcessCPU()
	for b.Loop() {
		res, err := svc.SearchRanked(ctx, alice, custody.SearchInput{Query: benchWords[rng.IntN(len(benchWords))] + " " + benchWords[rng.IntN(len(benchWords))], Mode: custody.ModeHybrid})
		if err != nil {
			b.Fatal(err)
		}
		if res.Mode != custody.ModeHybrid {
			b.Fatalf("the search ran in mode %s (%s)", res.Mode, res.Fallback)
		}
		hits += len(res.Items)
	}
	if hits == 0 && b.N >= 10 {
		b.Fatal("no search found anything")
	}
	if cpu := ProcessCPU() - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
	}
	b.ReportMetric(float64(n), "records")
}

// The namespaces of Populate's records: one in ten is in TenthNamespace,
// one in a thousand in ThousandthNamespace, the rest in "bench".
const (
	TenthNamespace      = "bench/tenth"
	ThousandthNamespace = "bench/thousandth"
)

// ThousandthProject is the metadata "project" of one in a thousand of
// Populate's records.
const ThousandthProject = "apollo"

// benchMetadata is the metadata of Populate's i-th record: one in ten
// has a source of its own (a value no other record has, as a message id
// would be), and one in a thousand of those is of ThousandthProject.
func benchMetadata(i int) custody.Metadata {
	switch {
	case i%1000 == 250:
		return custody.Metadata{"source": fmt.Sprintf("msg-%d", i), "project": ThousandthProject}
	case i%10 == 0:
		return custody.Metadata{"source": fmt.Sprintf("msg-%d", i)}
	}
	return nil
}

// benchClass is the class of Populate's i-th record.
func benchClass(i int) custody.Class {
	if i%100 == 50 {
		return custody.ClassEpisode
	}
	return custody.ClassFact
}

// benchNamespace is the namespace of Populate's i-th record.
func benchNamespace(i int) string {
	switch {
	case i%1000 == 999:
		return ThousandthNamespace
	case i%10 == 3:
		return TenthNamespace
	}
	return "bench"
}

// Populate inserts n records of tenant acme directly (no log entries, so
// such a store does not verify): owners alice and bob, audiences owner,
// group:fin and tenant, states mostly admitted, namespaces as
// benchNamespace gives them, facts but for an episode in a hundred, one
// in a thousand keyed payee.<i>, metadata as benchMetadata gives it, the
// i-th created at Start + i ms, bodies
// of 12 words from the Common vocabulary. If the store has an Analyze(ctx) method, it is called
// at the end.
func Populate(tb testing.TB, store custody.Store, n int) {
	PopulateFrom(tb, store, n, Common)
}

// PopulateFrom is Populate with bodies drawn from vocabulary v.
func PopulateFrom(tb testing.TB, store custody.Store, n int, v Vocabulary) {
	tb.Helper()
	ctx := tb.Context()
	rng := rand.New(rand.NewPCG(5, 6))
	entropy := ulid.Monotonic(rand.NewChaCha8([32]byte{7}), 0)
	const batch = 1000
	for done := 0; done < n; done += batch {
		err := store.Update(ctx, func(tx custody.Tx) error {
			for i := done; i < min(done+batch, n); i++ {
				at := Start.Add(time.Duration(i) * time.Millisecond)
				r := &custody.Record{ID: ulid.MustNew(ulid.Timestamp(at), entropy).String(), Tenant: "acme", Owner: "alice",
					Namespace: benchNamespace(i), Class: benchClass(i), Body: v.body(rng, 12), Channel: custody.ChannelUser,
					Writer: "acme/alice", Authority: custody.AuthorityUser, Audience: custody.AudienceOwner,
					State: custody.StateAdmitted, CreatedAt: at, Version: 1, Parents: []custody.Edge{}, Metadata: benchMetadata(i)}
				if i%1000 == 500 {
					r.Key = fmt.Sprintf("payee.%d", i)
				}
				switch x := rng.IntN(10); {
				case x < 3:
					r.Owner, r.Writer = "bob", "acme/bob"
				case x == 3:
					r.State = custody.StateQuarantined
				case x == 4:
					r.State = custody.StateRetired
				case x == 5:
					r.Audience = "group:fin"
				case x == 6:
					r.Owner, r.Writer, r.Audience = "bob", "acme/bob", custody.AudienceTenant
				}
				if err := tx.InsertRecord(ctx, r); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			tb.Fatalf("populating: %v", err)
		}
	}
	// A backend that keeps planner statistics refreshes them, as its
	// background maintenance would soon after such a load.
	if a, ok := store.(interface{ Analyze(context.Context) error }); ok {
		if err := a.Analyze(ctx); err != nil {
			tb.Fatal(err)
		}
	}
}

// Vocabulary is the words benchmark bodies and queries are made of.
type Vocabulary []string

// Common is 1000 words: in bodies of 12 words, each word is in about 1.2%
// of the records, so a two-word query matches about 2,400 of 100,000.
var Common = vocabulary(1000)

// Varied is 8000 words: each is in about 0.15% of the records, as the terms
// of varied natural text are; a two-word query matches about 300 of
// 100,000.
var Varied = vocabulary(8000)

// benchWords is the Common vocabulary.
var benchWords = Common

// vocabulary returns n pronounceable words (n up to 8000).
func vocabulary(n int) Vocabulary {
	cons := []string{"b", "d", "f", "g", "k", "l", "m", "n", "p", "r"}
	vow := []string{"a", "e", "i", "o", "u", "ai", "ou", "ei", "ia", "oa"}
	ends := []string{"o", "ra", "lu", "mi", "po", "se", "ti", "va"}
	var out Vocabulary
	for _, end := range ends {
		for _, c1 := range cons {
			for _, v := range vow {
				for _, c2 := range cons {
					if len(out) == n {
						return out
					}
					out = append(out, c1+v+c2+end)
				}
			}
		}
	}
	return out
}

func (v Vocabulary) body(rng *rand.Rand, words int) string {
	ws := make([]string, words)
	for i := range ws {
		ws[i] = v[rng.IntN(len(v))]
	}
	return strings.Join(ws, " ") + fmt.Sprintf(" #%d", rng.IntN(1e6))
}

func benchBody(rng *rand.Rand, words int) string { return Common.body(rng, words) }

// Query is the i-th two-word query over v, for benchmarks outside this
// package.
func (v Vocabulary) Query(i int) string {
	return v[(i*7919)%len(v)] + " " + v[(i*104729+1)%len(v)]
}

// BenchQuery is the i-th two-word query over the Common vocabulary.
func BenchQuery(i int) string { return Common.Query(i) }

// PrepareSearch builds what a store keeps in memory for search, as a
// server does as it starts, and waits for it (the SQLite store's copy of
// its search index); a store with nothing to build is left as it is.
func PrepareSearch(store custody.Store) {
	if p, ok := store.(interface {
		PrepareSearch()
		AwaitSearchIndex()
	}); ok {
		p.PrepareSearch()
		p.AwaitSearchIndex()
	}
}
