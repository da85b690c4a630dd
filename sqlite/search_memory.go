package sqlite

import (
	"context"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/embed"
	"github.com/custody-mem/custody/internal/lexical"
	"github.com/custody-mem/custody/internal/postings"
)

// A search ranked by the store's copy of the index (search_index.go)
// takes the best-scored records a few at a time, best first, and keeps
// those eligible for the caller under the query's filters, read with one
// statement per few: the same condition, searchFilter, that the FTS5
// query applies before its LIMIT. So the result is the head of the same
// ranking; only how far down it has to look depends on how many of the
// best the caller may see. A ranking read again before it is returned
// takes the records it has read before from the texts kept beside the
// copy (search_texts.go).

// checkSizes are how many records each statement checks, in turn (the
// last one again until the ranking is exhausted): few, as the best are
// most often eligible, then more, so that a caller who may see few of the
// matches costs a few statements, not one per record. Each size is its
// own statement (shorter lists are padded), so each is prepared once.
// The sizes are close enough together that a first statement checks
// little more than it was asked for: reading a row is most of a check's
// cost, and a semantic search asks for 400 candidates.
var checkSizes = []int{16, 64, 128, 256, 512, 1024}

// firstCheck is how many of the best records the first statement of a
// search asking for limit checks: the copy ranks only records its own
// filter finds eligible (the same as searchFilter's), so nearly all of
// them pass, and an eighth more covers those that ceased to be eligible
// since the copy learnt of them.
func firstCheck(limit int) int { return checkSize(limit + limit/8) }

// inlineBuildRows is the largest store (by its last rid) whose copy a
// search builds itself, waiting for it (tens of milliseconds), rather than
// on a goroutine of its own while FTS5 ranks: a new server's first
// searches are ranked by the copy, and so are a test's.
var inlineBuildRows int64 = 20000

// rebuildEvery is how often at most a search builds the copy again once
// it was built: when another process writes to the same file, each of its
// commits makes the copy stale, and building it after each would keep a
// core busy and the copy never ready. In between, FTS5 ranks.
var rebuildEvery = 30 * time.Second

// rankCopy ranks terms with the copy over the rows f keeps, if it covers
// position at, into sc's hits; ok is false if the search must rank
// with FTS5 instead. A copy never built is built first on a small store
// (inlineBuildRows), and on its own goroutine on a larger one; a copy
// built before is built again on its own goroutine, at most every
// rebuildEvery.
func (s *Store) rankCopy(ctx context.Context, terms []string, f postings.Filter, at searchPos, sc *postings.Scratch) ([]postings.Hit, int64, bool) {
	hits, visible, ok, build := s.rankHeld(terms, f, at, sc)
	if build {
		s.search.mu.RLock()
		built, last := !s.search.lastBuild.IsZero(), s.search.lastBuild
		s.search.mu.RUnlock()
		var rows int64
		if !built {
			if err := s.reader().QueryRowContext(ctx, `SELECT COALESCE(MAX(rid), 0) FROM records`).Scan(&rows); err != nil {
				rows = math.MaxInt64
			}
		}
		switch {
		case built && time.Since(last) < rebuildEvery:
		case built || rows > inlineBuildRows:
			s.startSearchBuild()
		case s.claimBuild():
			s.buildSearchIndex(ctx)
			hits, visible, ok, _ = s.rankHeld(terms, f, at, sc)
		}
	}
	if !ok {
		s.search.byFTS.Add(1)
	}
	return hits, visible, ok
}

// rankHeld ranks terms over the rows f keeps with the copy if it covers
// position at (searchPos), and counts the rows its statistics are over
// (visible); build is whether a build should start (none runs, and the
// copy is missing or another connection made it stale). A later position
// is this store's writer's commit, made between the search reading at
// and ranking: the copy is then newer than the search's
// view, not stale, and the rows it ranks are checked for eligibility in
// SQL after it. (Treating it as stale made every search in a burst of
// writes fall back to FTS5 and, every rebuildEvery, drop the copy and
// build it again.)
//
// A search that read the position of a commit this store's writer has
// yet to give the copy waits for it, at most catchUpWait, so that a
// search during a burst of writes ranks with the copy rather than with
// FTS5, which costs tens of milliseconds at 100k records.
func (s *Store) rankHeld(terms []string, f postings.Filter, at searchPos, sc *postings.Scratch) (hits []postings.Hit, visible int64, ok, build bool) {
	si := &s.search
	var timeout <-chan time.Time
	for {
		si.mu.RLock()
		x, held, applying, off := si.x, si.at, si.applying, si.limit <= 0 || si.over || si.closed
		if !off && x != nil && held.covers(at) && !si.building {
			hits = x.Rank(terms, f, sc)
			visible, _, _ = x.Stats(nil, f, 0)
			si.mu.RUnlock()
			si.byCopy.Add(1)
			return hits, visible, true, false
		}
		building, applied := si.building, si.applied
		si.mu.RUnlock()
		if off || building || x == nil || !applying || applied == nil {
			return nil, 0, false, !off && !building && (x == nil || !applying)
		}
		if timeout == nil {
			t := time.NewTimer(catchUpWait)
			defer t.Stop()
			timeout = t.C
		}
		si.waiting.Add(1)
		select {
		case <-applied:
			si.waiting.Add(-1)
		case <-timeout:
			si.waiting.Add(-1)
			return nil, 0, false, false
		}
	}
}

// catchUpWait bounds how long a search waits for the copy to take a
// commit in progress before it ranks with FTS5.
const catchUpWait = 25 * time.Millisecond

// claimBuild marks a build as running, unless one is, the copy is off or
// the store is closing; the caller then builds.
func (s *Store) claimBuild() bool {
	si := &s.search
	si.mu.Lock()
	defer si.mu.Unlock()
	return si.claimLocked()
}

// claimLocked is claimBuild with si.mu held.
func (si *searchIndex) claimLocked() bool {
	if si.building || si.closed || si.limit <= 0 || si.over {
		return false
	}
	si.building, si.replay, si.x, si.lastBuild = true, nil, nil, time.Now()
	si.texts.empty()
	return true
}

// startSearchBuild builds the copy on a goroutine of its own, unless a
// build runs or the store is closing.
func (s *Store) startSearchBuild() {
	si := &s.search
	si.mu.Lock()
	defer si.mu.Unlock()
	if !si.claimLocked() {
		return
	}
	s.wg.Add(1) // under si.mu: Close sets closed under it before it waits
	si.builds.Add(1)
	go func() {
		defer s.wg.Done()
		defer si.builds.Done()
		start := time.Now()
		s.buildSearchIndex(s.bg)
		if records, bytes, _, _ := s.SearchIndexStats(); bytes > 0 {
			slog.Info("search: the index is in memory; searches are ranked there from now on",
				"records", records, "mib", bytes>>20, "took", time.Since(start).Round(time.Millisecond))
		}
	}()
}

// searchRanked is Search: the best eligible records, ranked by the copy
// or without it (search_fts.go), read by rid once they are known.
func (s *Store) searchRanked(ctx context.Context, sc custody.Scope, q custody.SearchQuery, at searchPos) ([]custody.Scored, error) {
	best, _, err := s.rankEligible(ctx, sc, q, lexical.Query(q.Text, maxQueryTerms), at, readChecked, "")
	if err != nil || len(best) == 0 {
		return nil, err
	}
	n := checkSize(len(best))
	args := make([]any, 0, n)
	for _, b := range best {
		args = append(args, b.rid)
	}
	for len(args) < n {
		args = append(args, args[0])
	}
	rows, err := s.reader().QueryContext(ctx, `SELECT `+recordCols+` FROM records r NOT INDEXED WHERE r.rid IN (`+placeholders(n)+`)`, args...)
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	byRid := make(map[int64]*custody.Record, len(best))
	for rows.Next() {
		r, rid, err := scanRecord(rows)
		if err != nil {
			return nil, unavailable(err)
		}
		byRid[rid] = r
	}
	if err := rows.Err(); err != nil {
		return nil, unavailable(err)
	}
	out := make([]custody.Scored, 0, len(best))
	for _, b := range best {
		if r := byRid[b.rid]; r != nil {
			out = append(out, custody.Scored{Record: r, Score: b.score})
		}
	}
	return out, nil
}

// lexicalRanked is LexicalRanks: Search's ranking without the records.
func (s *Store) lexicalRanked(ctx context.Context, sc custody.Scope, q custody.SearchQuery, at searchPos) ([]custody.Ranked, error) {
	best, _, err := s.rankEligible(ctx, sc, q, lexical.Query(q.Text, maxQueryTerms), at, readRanks, "")
	out := make([]custody.Ranked, len(best))
	for i, b := range best {
		out[i] = custody.Ranked{ID: b.id, Score: b.score}
	}
	return out, err
}

// rankEligible is bestEligible, ranked by the copy if it can, else
// without it (rankFTS): the same records, with the same scores.
func (s *Store) rankEligible(ctx context.Context, sc custody.Scope, q custody.SearchQuery, terms []string, at searchPos, read rowsRead, also string, alsoArgs ...any) ([]eligibleHit, int64, error) {
	best, visible, ok, err := s.bestEligible(ctx, sc, q, terms, at, read, also, alsoArgs...)
	if ok || err != nil {
		return best, visible, err
	}
	if err := s.pendingToFTS(ctx); err != nil {
		return nil, 0, unavailable(err)
	}
	return s.rankFTS(ctx, sc, q, terms, also, alsoArgs...)
}

// eligibleHit is a record bestEligible found eligible, and its score;
// its key and body when they were read (readTexts, or kept texts).
type eligibleHit struct {
	rid       int64
	id        string
	score     float64
	key, body string
	episode   bool
	form      embed.Form // the form kept with the texts, if any
	// partial is a kept record's form without its key and body (the
	// texts keep only the form once a scorer derived one).
	partial bool
	// read is a record read from its row, when the kept texts were at
	// epoch: CandidateTexts keeps it with the form a scorer derives.
	read  bool
	epoch uint64
}

// rankScratch is a ranking's memory, handed from one to the next: the
// copy's, and the kept texts a round of bestEligible takes.
type rankScratch struct {
	postings.Scratch
	got []eligibleHit
}

// rowsRead is what a ranking reads of its best records, and whether the
// texts kept beside the copy may answer for them (search_texts.go).
type rowsRead int

const (
	// readChecked reads each record's id with the store's condition:
	// the ranking returns the rows it checks (Search).
	readChecked rowsRead = iota
	// readRanks reads the ids of a ranking whose records are read again,
	// with the store's condition, before any is returned: kept texts
	// answer for the records they keep.
	readRanks
	// readTexts is readRanks with each record's key and body.
	readTexts
)

// bestEligible ranks terms with the copy and returns the best records
// eligible for sc under q's filters (and the condition also, on a record
// aliased r, with its arguments), at most q.Limit, best first, and the
// number of records sc may retrieve (the statistics' rows). ok is
// false, and nothing is read, if the copy cannot rank them.
func (s *Store) bestEligible(ctx context.Context, sc custody.Scope, q custody.SearchQuery, terms []string, at searchPos, read rowsRead, also string, alsoArgs ...any) ([]eligibleHit, int64, bool, error) {
	scratch, _ := s.search.pool.Get().(*rankScratch)
	if scratch == nil {
		scratch = new(rankScratch)
	}
	defer s.search.pool.Put(scratch)
	hits, visible, ok := s.rankCopy(ctx, terms, postings.QueryFilter(searchParts(sc), searchOwner(sc.Tenant, sc.Subject), sc.Now, q), at, &scratch.Scratch)
	if !ok {
		return nil, 0, false, nil
	}
	filter, fargs := searchFilter(sc, q)
	if also != "" {
		filter, fargs = filter+` AND `+also, append(fargs, alsoArgs...)
	}
	var kept *searchTexts
	if read != readChecked && copyDecides(q, also) {
		kept = &s.search.texts
	}
	out := make([]eligibleHit, 0, min(q.Limit, len(hits)))
	got := scratch.got
	defer func() { clear(got); scratch.got = got[:0] }() // it views the texts: kept clear
	for n := firstCheck(q.Limit); len(out) < q.Limit && len(hits) > 0; n = checkSize(4 * n) {
		best := postings.Best(hits, n)
		hits = hits[len(best):]
		got = slices.Grow(got[:0], len(best))[:len(best)]
		clear(got)
		missing := best
		if kept != nil {
			missing = kept.take(best, got)
			s.search.textsKept.Add(int64(len(best) - len(missing)))
		}
		rows, err := s.readMissing(ctx, filter, fargs, missing, read == readTexts || kept != nil, kept)
		if err != nil {
			return nil, visible, true, err
		}
		if kept != nil && read != readTexts {
			kept.keep(maps.Values(rows)) // a ranking that reads texts keeps them with their forms (CandidateTexts)
		}
		var spare map[int64]eligibleHit // read past the limit
		for i, h := range best {
			e := got[i]
			if e.rid == 0 { // not kept: read now, if eligible
				e = rows[int64(h.Row)]
			}
			switch {
			case e.rid == 0:
			case len(out) < q.Limit:
				e.score = h.Score
				out = append(out, e)
			case e.read && kept != nil && read == readTexts:
				if spare == nil {
					spare = make(map[int64]eligibleHit)
				}
				spare[e.rid] = e
			}
		}
		if spare != nil {
			kept.keep(maps.Values(spare)) // the others are kept with their forms (CandidateTexts)
		}
	}
	if read != readTexts { // the neighbour walk asks about a lexical list's records
		s.noteFacts(out)
	}
	return out, visible, true, nil
}

// checkSize is the first of checkSizes not below n, or the last.
func checkSize(n int) int {
	for _, c := range checkSizes {
		if c >= n {
			return c
		}
	}
	return checkSizes[len(checkSizes)-1]
}

func placeholders(n int) string { return strings.TrimSuffix(strings.Repeat("?,", n), ",") }

// noteFacts notes the records of hits that are no episode (s.facts);
// a zero hit is none.
func (s *Store) noteFacts(hits []eligibleHit) {
	facts := make([]string, 0, len(hits))
	for _, e := range hits {
		if e.rid != 0 && !e.episode {
			facts = append(facts, e.id)
		}
	}
	s.facts.Note(facts)
}

// copyDecides reports whether the copy's ranking of q keeps exactly the
// records the store's condition would (search_texts.go): the ranking adds
// no condition, and q has no filter the store applies in SQL beyond the
// eligibility, namespace and class the copy keeps exactly (filterSQL's
// filters the copy keeps widened or hashed, and any filter added there
// later).
func copyDecides(q custody.SearchQuery, also string) bool {
	fq, _ := filterSQL(q.Filters)
	return also == "" && fq == ""
}

// readMissing reads the records of best that pass filter (with its
// arguments fargs), by rid, with their texts if texts. With kept, the
// records are marked read at kept's epoch, for kept to keep them.
func (s *Store) readMissing(ctx context.Context, filter string, fargs []any, best []postings.Hit, texts bool, kept *searchTexts) (map[int64]eligibleHit, error) {
	if len(best) == 0 {
		return nil, nil
	}
	n := checkSize(len(best))
	args := make([]any, 0, n+len(fargs))
	for _, h := range best {
		args = append(args, int64(h.Row))
	}
	for len(args) < n {
		args = append(args, args[0]) // padding: the same rid again
	}
	var epoch uint64
	if kept != nil {
		epoch = kept.begin()
	}
	read := make(map[int64]eligibleHit, len(best))
	if err := s.readEligible(ctx, filter, n, append(args, fargs...), texts, read); err != nil {
		return nil, err
	}
	if kept != nil {
		for rid, e := range read {
			e.read, e.epoch = true, epoch
			read[rid] = e
		}
		s.search.textsRead.Add(int64(len(read)))
	}
	return read, nil
}

// readEligible reads into ids, by rid, the records among the n rids of
// args that pass filter (whose arguments follow the rids in args): their
// ids, and their keys and bodies if texts.
func (s *Store) readEligible(ctx context.Context, filter string, n int, args []any, texts bool, ids map[int64]eligibleHit) error {
	cols := `r.rid, r.id, r.class = 'episode'`
	if texts {
		cols += `, r.key, r.body`
	}
	// NOT INDEXED: the records are read by rid, never by a scan of an
	// index of the filter's (the tenant's, say), which the planner would
	// otherwise pick for a short list.
	rows, err := s.reader().QueryContext(ctx, `SELECT `+cols+` FROM records r NOT INDEXED WHERE r.rid IN (`+placeholders(n)+`) AND `+filter, args...)
	if err != nil {
		return unavailable(err)
	}
	defer rows.Close()
	for rows.Next() {
		var e eligibleHit
		dest := []any{&e.rid, &e.id, &e.episode}
		if texts {
			dest = append(dest, &e.key, &e.body)
		}
		if err := rows.Scan(dest...); err != nil {
			return unavailable(err)
		}
		ids[e.rid] = e
	}
	if err := rows.Err(); err != nil {
		return unavailable(err)
	}
	return nil
}

// termMatchesCopy is TermMatches counted by the copy: how many records sc
// may retrieve hold each term, at most bound. ok is false if the copy
// cannot count them.
func (s *Store) termMatchesCopy(sc custody.Scope, terms []string, bound int, at searchPos) ([]int, bool) {
	si := &s.search
	si.mu.RLock()
	defer si.mu.RUnlock()
	if si.x == nil || !si.at.covers(at) || si.building || si.over || si.limit <= 0 {
		return nil, false
	}
	_, _, holding := si.x.Stats(terms, postings.Filter{Parts: searchParts(sc), Owner: searchOwner(sc.Tenant, sc.Subject), Now: sc.Now.UnixNano()}, bound)
	out := make([]int, len(terms))
	for i, t := range terms {
		if t != "" && !strings.ContainsRune(t, '"') {
			out[i] = min(int(holding[i]), bound)
		}
	}
	return out, true
}
