package sqlite

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/internal/lexical"
	"github.com/custody-mem/custody/storetest"
	"github.com/oklog/ulid/v2"
)

// referenceSearch is the lexical ranking with no LIMIT: every eligible
// match, best first, scored without the copy (rankFTS: FTS5's matches,
// the statistics of sc's eligible records counted in SQL).
func referenceSearch(t *testing.T, s *Store, sc custody.Scope, q custody.SearchQuery) []custody.Scored {
	t.Helper()
	q.Limit = 1 << 30
	best, _, err := s.rankFTS(t.Context(), sc, q, lexical.Query(q.Text, maxQueryTerms), "")
	if err != nil {
		t.Fatal(err)
	}
	var out []custody.Scored
	for _, b := range best {
		recs, err := queryRecords(t.Context(), s.r, `SELECT `+recordCols+` FROM records r WHERE r.rid = ?`, b.rid)
		if err != nil || len(recs) != 1 {
			t.Fatal(err, len(recs))
		}
		out = append(out, custody.Scored{Record: recs[0], Score: b.score})
	}
	return out
}

// sameRanking reports how got differs from the first len(got) of ref (or
// of its limit) modulo exact score ties: the same scores position by
// position, and at each position a record of ref with that score.
func sameRanking(got []custody.Scored, gotIDs []string, ref []custody.Scored, limit int) error {
	want := min(limit, len(ref))
	if len(gotIDs) != want {
		return fmt.Errorf("%d hits, want %d", len(gotIDs), want)
	}
	byScore := map[float64]map[string]bool{}
	for _, h := range ref {
		if byScore[h.Score] == nil {
			byScore[h.Score] = map[string]bool{}
		}
		byScore[h.Score][h.ID] = true
	}
	seen := map[string]bool{}
	for i, id := range gotIDs {
		if got != nil && got[i].Score != ref[i].Score {
			return fmt.Errorf("hit %d: score %v, want %v", i, got[i].Score, ref[i].Score)
		}
		if !byScore[ref[i].Score][id] || seen[id] {
			return fmt.Errorf("hit %d: %s, not a record of score %v (or twice)", i, id, ref[i].Score)
		}
		seen[id] = true
	}
	return nil
}

// TestSearchRankingEquivalence checks Search and LexicalRanks against the
// reference ranking on a seeded corpus of the common vocabulary (whose
// queries match hundreds of records, many of them not eligible: another
// owner's, quarantined, retired, expired, an older version of a key),
// for several subjects, filters and limits: each is the head of the
// reference, the same records in the same order modulo exact score ties
// (eligibility and filters applied before the LIMIT, never after), and
// no hit is ineligible. Any faster candidate query (one that stops
// early, say) must keep passing it.
//
// Its reference counts the caller's statistics in SQL for every query
// (0.7 s a search under the race detector, 11 ms without), so it runs
// without the race detector: `go test ./sqlite` and .ci/run's own step.
func TestSearchRankingEquivalence(t *testing.T) {
	if raceEnabled {
		t.Skip("slow under the race detector; run without -race: go test -run TestSearchRankingEquivalence ./sqlite (.ci/run does)")
	}
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.PopulateFrom(t, s, 4000, storetest.Common)
	now := storetest.Start.Add(time.Hour)
	// Keyed versions and expired records beside Populate's, from the same
	// words: an older version and an expired record are often the best
	// match of a query of their words.
	rng := rand.New(rand.NewPCG(8, 9))
	entropy := ulid.Monotonic(rand.NewChaCha8([32]byte{9}), 0)
	err = s.Update(t.Context(), func(tx custody.Tx) error {
		for i := range 600 {
			at := storetest.Start.Add(time.Duration(4000+i) * time.Millisecond)
			body := storetest.Common.Query(i) + " " + storetest.Common.Query(i)
			r := &custody.Record{ID: ulid.MustNew(ulid.Timestamp(at), entropy).String(), Tenant: "acme", Owner: "alice",
				Namespace: "keyed", Class: custody.ClassFact, Body: body, Channel: custody.ChannelUser,
				Writer: "acme/alice", Authority: custody.AuthorityUser, Audience: custody.AudienceOwner,
				State: custody.StateAdmitted, CreatedAt: at, Version: 1 + i/200, Parents: []custody.Edge{}}
			switch i % 3 {
			case 0:
				r.Key = fmt.Sprintf("k%d", i%200) // three versions of each key
			case 1:
				exp := now.Add(time.Duration(rng.IntN(3)-1) * time.Minute) // expired, or not yet
				r.ExpiresAt = &exp
			}
			if err := tx.InsertRecord(t.Context(), r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Both rankings: the copy in memory (search_index.go), then FTS5's.
	buildCopyNow(t, s)
	refs := map[[3]int][]custody.Scored{}
	checkRankingEquivalence(t, s, now, refs, 1)
	if n := s.search.byFTS.Load(); n != 0 || s.search.byCopy.Load() == 0 {
		t.Fatalf("%d searches ranked by FTS5, %d by the copy: want all by the copy", n, s.search.byCopy.Load())
	}
	s.search.mu.Lock()
	s.search.limit = 0 // no copy: FTS5 ranks
	s.search.mu.Unlock()
	// FTS5's ranking counts the caller's statistics in SQL on every
	// search: a quarter of the texts keeps the run short under -race.
	checkRankingEquivalence(t, s, now, refs, 4)
	if s.search.byFTS.Load() == 0 {
		t.Fatal("no search ranked by FTS5 with the copy off")
	}
}

// checkRankingEquivalence checks every every-th query text; refs holds
// the reference rankings already computed (the store does not change
// between calls), by text, scope and query.
func checkRankingEquivalence(t *testing.T, s *Store, now time.Time, refs map[[3]int][]custody.Scored, every int) {
	scopes := []custody.Scope{
		{Tenant: "acme", Subject: "alice", Groups: []string{"fin"}, Now: now},
		{Tenant: "acme", Subject: "alice", Now: now},
		{Tenant: "acme", Subject: "bob", Now: now},
		{Tenant: "other", Subject: "alice", Now: now},
	}
	// A span of Populate's records, its edges on records' own times (the
	// i-th is created at Start + i ms).
	spanFrom, spanTo := storetest.Start.Add(2000*time.Millisecond), storetest.Start.Add(2600*time.Millisecond)
	queries := 0
	for i := range 40 {
		if i%every != 0 {
			continue
		}
		text := storetest.Common.Query(i * 13)
		if i%4 == 0 {
			text += " " + storetest.Common[i]
		}
		for si, sc := range scopes {
			for qi, q := range []custody.SearchQuery{
				{Text: text, Limit: 10},
				{Text: text, Limit: 3},
				{Text: text, Limit: 10, Namespace: "keyed"},
				{Text: text, Limit: 10, Namespace: storetest.TenthNamespace},
				{Text: text, Limit: 5, Namespace: storetest.ThousandthNamespace},
				{Text: text, Limit: 10, NamespacePrefix: "bench"},
				{Text: text, Limit: 10, NamespacePrefix: "ben"}, // whole segments: nothing
				{Text: text, Limit: 10, NamespacePrefix: "bench", Namespace: storetest.TenthNamespace},
				{Text: text, Limit: 10, Class: custody.ClassEpisode}, // none
				{Text: text, Limit: 10, Filters: custody.Filters{KeyPrefix: "k19"}},
				{Text: text, Limit: 10, Filters: custody.Filters{KeyPrefix: "k1999999999"}}, // past the eight bytes the copy keeps
				{Text: text, Limit: 10, Filters: custody.Filters{CreatedAfter: &spanFrom, CreatedBefore: &spanTo}},
				{Text: text, Limit: 10, Filters: custody.Filters{CreatedBefore: &spanFrom}},
				{Text: text, Limit: 10, Class: custody.ClassFact, Filters: custody.Filters{KeyPrefix: "k1"}},
				{Text: text, Limit: 10, Filters: custody.Filters{Metadata: custody.Metadata{"project": storetest.ThousandthProject}}},
				{Text: text, Limit: 10, Filters: custody.Filters{Metadata: custody.Metadata{"project": storetest.ThousandthProject, "source": "msg-1250"}}},
				{Text: text, Limit: 10, Filters: custody.Filters{Metadata: custody.Metadata{"project": storetest.ThousandthProject, "source": "msg-1260"}}}, // none
				{Text: text, Limit: 3, Namespace: "bench", Filters: custody.Filters{Metadata: custody.Metadata{"source": "msg-" + strconv.Itoa(i*100)}}},
			} {
				ref, ok := refs[[3]int{i, si, qi}]
				if !ok {
					ref = referenceSearch(t, s, sc, q)
					refs[[3]int{i, si, qi}] = ref
				}
				hits, err := s.Search(t.Context(), sc, q)
				if err != nil {
					t.Fatal(err)
				}
				ids := make([]string, len(hits))
				for j, h := range hits {
					ids[j] = h.ID
					if !h.Eligible(sc.Subject, sc.Groups, now) || h.Tenant != sc.Tenant {
						t.Errorf("%q for %s: %s is not eligible (state %s, owner %s, audience %s, expires %v)",
							q.Text, sc.Subject, h.ID, h.State, h.Owner, h.Audience, h.ExpiresAt)
					}
				}
				if err := sameRanking(hits, ids, ref, q.Limit); err != nil {
					t.Errorf("Search %q for %s %+v: %v", q.Text, sc.Subject, q, err)
				}
				ranks, err := s.LexicalRanks(t.Context(), sc, q)
				if err != nil {
					t.Fatal(err)
				}
				rids := make([]string, len(ranks))
				for j, r := range ranks {
					rids[j] = r.ID
					if r.Score != ref[j].Score {
						t.Errorf("LexicalRanks %q hit %d: score %v, want %v", q.Text, j, r.Score, ref[j].Score)
					}
				}
				if err := sameRanking(nil, rids, ref, q.Limit); err != nil {
					t.Errorf("LexicalRanks %q for %s %+v: %v", q.Text, sc.Subject, q, err)
				}
				if len(ref) > q.Limit {
					queries++
				}
			}
		}
	}
	// The corpus must make the ranking matter: most queries have more
	// eligible matches than their limit.
	if queries < 200/every {
		t.Fatalf("only %d queries had more eligible matches than their limit", queries)
	}
}
