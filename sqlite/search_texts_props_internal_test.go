package sqlite

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/embed"
	"pgregory.net/rapid"
)

// Whatever the texts were given (texts or forms), kept, erased and
// dropped for their bound, each record they keep is given back as it was
// kept, an erased body is in none of their chunks, and they keep to
// their bound.
func TestSearchTextsKeepWhatTheyWereGiven(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		texts := searchTexts{limit: rapid.IntRange(300, 4000).Draw(rt, "limit")}
		type given struct{ id, key, body, form string }
		model := map[uint32]given{}
		erased := map[uint32]string{}
		serial := 0
		for range rapid.IntRange(1, 120).Draw(rt, "ops") {
			rid := uint32(rapid.IntRange(1, 30).Draw(rt, "rid"))
			switch op := rapid.IntRange(0, 9).Draw(rt, "op"); {
			case op < 7:
				g, ok := model[rid]
				if !ok { // a record's text never changes while kept
					serial++
					body := fmt.Sprintf("body %d of %s", serial, strings.Repeat("w", rapid.IntRange(0, 300).Draw(rt, "len")))
					g = given{id: fmt.Sprintf("id%d-%d", rid, serial), key: rapid.SampledFrom([]string{"", "k", "payee/acct"}).Draw(rt, "key"), body: body, form: "form<" + body + ">"}
					model[rid] = g
					delete(erased, rid)
				}
				e := eligibleHit{rid: int64(rid), id: g.id, key: g.key, body: g.body, read: true, epoch: texts.begin()}
				if op%2 == 0 {
					e.form = embed.Form(g.form)
				}
				texts.keep(slices.Values([]eligibleHit{e}))
			case op < 9:
				if g, ok := model[rid]; ok {
					erased[rid] = g.body
				}
				texts.remove(rid)
				delete(model, rid)
			default:
				texts.trimLocked()
			}
			if _, bytes := texts.held(); bytes > texts.limit {
				rt.Fatalf("%d bytes kept, past the bound of %d", bytes, texts.limit)
			}
			for rid, r := range texts.m {
				g, ok := model[rid]
				if !ok {
					rt.Fatalf("record %d kept, never given or erased", rid)
				}
				h := texts.hit(rid, r)
				want := eligibleHit{id: g.id, key: g.key, body: g.body}
				if r.hasForm {
					want = eligibleHit{id: g.id, form: embed.Form(g.form), partial: true}
				}
				if h.id != want.id || h.key != want.key || h.body != want.body || string(h.form) != string(want.form) || h.partial != want.partial {
					rt.Fatalf("record %d given back as %+v, want %+v", rid, h, want)
				}
			}
			for rid, body := range erased {
				if texts.holds(int64(rid), body) {
					rt.Fatalf("record %d's erased body %q is still kept: %v %+v", rid, body, texts.m, texts.chunks)
				}
			}
		}
	})
}

// Searches side by side with erasures and new records, under a bound
// small enough that chunks are dropped and compacted as they go: every
// candidate is given its record's text as written (or the form derived
// from it), and no record erased before a search began is given to it.
// Run with -race, it checks the chunks' views.
func TestSearchTextsUnderConcurrentErasures(t *testing.T) {
	ctx := t.Context()
	s := openTestStore(t, filepath.Join(t.TempDir(), "c.db"), Options{SearchMemory: 2 << 20})
	var recs []*custody.Record
	for i := range 300 {
		recs = append(recs, testRecord(fmt.Sprintf("plumber note %d %s", i, strings.Repeat("pipe ", i%40)), ""))
	}
	putRecords(t, s, recs...)
	buildCopyNow(t, s)
	if s.search.texts.limit >= 1<<20 {
		t.Fatalf("texts bound %d: too large to drop chunks here", s.search.texts.limit)
	}
	var mu sync.Mutex
	bodies := map[string]string{} // as written
	erasedAt := map[string]int{}  // the erasures committed before it, and it
	erasing := map[string]bool{}  // its erasure begun
	erasures := 0
	for _, r := range recs {
		bodies[r.ID] = r.Body
	}
	sc := custody.Scope{Tenant: "acme", Subject: "alice", Now: time.Now().Add(time.Hour)}
	q := custody.SearchQuery{Text: "plumber", Limit: 10}
	var wg sync.WaitGroup
	var failure sync.Once
	var failed error
	fail := func(err error) { failure.Do(func() { failed = err }) }
	for g := range 4 {
		wg.Go(func() {
			for round := range 30 {
				mu.Lock()
				began := erasures
				mu.Unlock()
				_, err := s.CandidateTexts(ctx, sc, q, []string{"plumber"}, 400, func(c *custody.CandidateText) {
					mu.Lock()
					body, at, erasing := bodies[c.ID], erasedAt[c.ID], erasing[c.ID]
					mu.Unlock()
					switch {
					case at > 0 && at <= began:
						fail(fmt.Errorf("searcher %d round %d: %s given, erased before the search began", g, round, c.ID))
					case erasing && (!c.Partial && c.Body == "" || c.Partial && string(c.Form) == "form of "):
						// read as its erasure committed, in this search
						// or another (which kept the form of its empty body)
					case c.Partial && string(c.Form) != "form of "+body, !c.Partial && c.Body != body:
						fail(fmt.Errorf("searcher %d round %d: %s given %q / %q, written as %q", g, round, c.ID, c.Body, c.Form, body))
					}
					if !c.Partial && g%2 == 0 {
						c.Form = embed.Form("form of " + c.Body)
					}
				})
				if err != nil {
					fail(err)
					return
				}
			}
		})
	}
	for i, r := range recs[:60] {
		erasedRec := *r
		erasedRec.Body, erasedRec.Erased = "", true
		mu.Lock()
		erasing[r.ID] = true
		mu.Unlock()
		if err := s.Update(ctx, func(tx custody.Tx) error { return tx.UpdateRecord(ctx, &erasedRec) }); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		erasures++
		erasedAt[r.ID] = erasures
		mu.Unlock()
		fresh := testRecord(fmt.Sprintf("plumber fresh note %d", i), "")
		mu.Lock()
		bodies[fresh.ID] = fresh.Body
		mu.Unlock()
		putRecords(t, s, fresh)
	}
	wg.Wait()
	if failed != nil {
		t.Fatal(failed)
	}
	for _, r := range recs[:60] {
		if s.search.texts.holds(-1, r.Body) {
			t.Fatalf("%s's erased body %q is still kept", r.ID, r.Body)
		}
	}
}
