package postgres

import (
	"context"
	"strings"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/embed"
	"github.com/custody-mem/custody/internal/postings"
	"github.com/jackc/pgx/v5"
)

// checkSizes are how many of the best-ranked records each eligibility
// query asks about, in turn (the last one again until the ranking is
// exhausted): few, as the best are most often eligible, then eight times
// more each time, so that a caller who may see few of the matches (a
// namespace of a few records among a common word's thousands) costs a few
// round trips, and at worst about what ranking them all by ts_rank_cd
// costs: a probe of the primary key for each match.
var checkSizes = []int{16, 128, 1024, 8192}

// firstCheck is how many of the best records the first eligibility query
// of a search asking for limit asks about: the copy ranks only records
// its own filter finds eligible, so nearly all of them pass, and an
// eighth more covers those that ceased to be eligible since the copy
// learnt of them. The query takes the ids as one array, so any number
// is one statement.
func firstCheck(limit int) int { return max(checkSizes[0], limit+limit/8) }

// checkSize is the first of checkSizes not below n, or the last.
func checkSize(n int) int {
	for _, c := range checkSizes {
		if c >= n {
			return c
		}
	}
	return checkSizes[len(checkSizes)-1]
}

// searchCopy is Search ranked by the tenant's copy; ok is false if the
// copy cannot rank it (the caller ranks by ts_rank_cd).
func (s *Store) searchCopy(ctx context.Context, sc custody.Scope, q custody.SearchQuery) ([]custody.Scored, bool, error) {
	return bestEligible(ctx, s, sc, q, nil, recordCols, func(rows pgx.Rows) (string, custody.Scored, error) {
		r, err := scanRecord(rows)
		if err != nil {
			return "", custody.Scored{}, err
		}
		return r.ID, custody.Scored{Record: r}, nil
	}, func(x custody.Scored, score float64) custody.Scored { x.Score = score; return x })
}

// candidateTextsCopy is CandidateTexts ranked by the tenant's copy, as
// the SQLite store ranks them: of the records eligible for sc under q's
// filters that hold any of terms, the best by BM25, at most candidates,
// read with their keys and bodies by the query that checks their
// eligibility, or, for those whose form the copy keeps
// (search_copy_forms.go), checked alone and given by their form. The
// forms fn derives are kept; a kept form fn cannot score is given again
// with its text, read then.
func (s *Store) candidateTextsCopy(ctx context.Context, sc custody.Scope, q custody.SearchQuery, terms []string, candidates int, fn func(c *custody.CandidateText)) (bool, error) {
	scratch, _ := s.copies.scratch.Get().(*postings.Scratch)
	if scratch == nil {
		scratch = new(postings.Scratch)
	}
	defer s.copies.scratch.Put(scratch)
	rk, ok, err := s.rank(ctx, sc, q, terms, scratch)
	if !ok || err != nil {
		return ok, err
	}
	var c custody.CandidateText // one for every candidate: fn keeps none
	var derived, again []derivedForm
	found := 0
	err = s.eachRound(rk, candidates, func() bool { return found >= candidates }, func(best []postings.Hit, ids []string) error {
		forms := rk.tc.formsOf(best, ids)
		texts, err := s.eligibleTexts(ctx, sc, q, ids, forms)
		if err != nil {
			return err
		}
		for i, id := range ids {
			t, ok := texts[id]
			if !ok || found >= candidates {
				continue
			}
			found++
			if forms[i] != nil {
				s.copies.formsServed.Add(1)
				c = custody.CandidateText{ID: id, Form: forms[i], Partial: true}
			} else {
				c = custody.CandidateText{ID: id, Key: t.key, Body: t.body}
			}
			fn(&c)
			switch {
			case forms[i] != nil && c.Form == nil:
				again = append(again, derivedForm{row: best[i].Row, id: id})
			case forms[i] == nil && c.Form != nil:
				derived = append(derived, derivedForm{row: best[i].Row, id: id, sum: textSumOf(s.copies.seed, t.body, t.key), form: c.Form})
			}
		}
		return nil
	})
	if err != nil {
		return true, err
	}
	if len(again) > 0 {
		if derived, err = s.withTexts(ctx, sc, q, again, derived, fn); err != nil {
			return true, err
		}
	}
	rk.tc.keepForms(derived, s.copies.formsLimit())
	return true, nil
}

// withTexts gives fn the candidates again, whose kept forms fn could not
// score, with their texts (read with their eligibility), and returns
// derived with the forms fn derived of them.
func (s *Store) withTexts(ctx context.Context, sc custody.Scope, q custody.SearchQuery, again, derived []derivedForm, fn func(c *custody.CandidateText)) ([]derivedForm, error) {
	ids := make([]string, len(again))
	for i, a := range again {
		ids[i] = a.id
	}
	texts, err := s.eligibleTexts(ctx, sc, q, ids, make([]embed.Form, len(ids)))
	if err != nil {
		return derived, err
	}
	var c custody.CandidateText
	for _, a := range again {
		if t, ok := texts[a.id]; ok {
			c = custody.CandidateText{ID: a.id, Key: t.key, Body: t.body}
			fn(&c)
			if c.Form != nil {
				a.sum, a.form = textSumOf(s.copies.seed, t.body, t.key), c.Form
				derived = append(derived, a)
			}
		}
	}
	return derived, nil
}

// candidateText is a candidate's key and body, empty when its form is
// kept.
type candidateText struct{ key, body string }

// eligibleTexts reads which of ids are eligible for sc under q's filters,
// in one round trip: with their keys and bodies where forms has none,
// their ids alone where it has one.
func (s *Store) eligibleTexts(ctx context.Context, sc custody.Scope, q custody.SearchQuery, ids []string, forms []embed.Form) (map[string]candidateText, error) {
	var withText, alone []string
	for i, id := range ids {
		if forms[i] != nil {
			alone = append(alone, id)
		} else {
			withText = append(withText, id)
		}
	}
	b := &pgx.Batch{}
	for _, part := range []struct {
		ids  []string
		cols string
	}{{withText, `r.id, r.key, r.body`}, {alone, `r.id, '', ''`}} {
		if len(part.ids) > 0 {
			var a args
			b.Queue(`SELECT `+part.cols+` FROM records r WHERE r.id = ANY(`+a.add(part.ids)+`::text[]) AND `+searchFilter(&a, sc, q), a...)
		}
	}
	out := make(map[string]candidateText, len(ids))
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	for range b.Len() {
		rows, err := br.Query()
		if err != nil {
			return nil, classify(err)
		}
		for rows.Next() {
			var id string
			var t candidateText
			if err := rows.Scan(&id, &t.key, &t.body); err != nil {
				rows.Close()
				return nil, classify(err)
			}
			out[id] = t
		}
		if err := rows.Err(); err != nil {
			return nil, classify(err)
		}
	}
	return out, classify(br.Close())
}

// lexicalRanksCopy is LexicalRanks ranked by the tenant's copy. The read
// of the ranked records notes those that are no episode (s.facts).
func (s *Store) lexicalRanksCopy(ctx context.Context, sc custody.Scope, q custody.SearchQuery) ([]custody.Ranked, bool, error) {
	var facts []string
	out, ok, err := bestEligible(ctx, s, sc, q, nil, `r.id, r.class = 'episode'`, func(rows pgx.Rows) (string, custody.Ranked, error) {
		var id string
		var episode bool
		err := rows.Scan(&id, &episode)
		if err == nil && !episode {
			facts = append(facts, id)
		}
		return id, custody.Ranked{ID: id}, err
	}, func(x custody.Ranked, score float64) custody.Ranked { x.Score = score; return x })
	s.facts.Note(facts)
	return out, ok, err
}

// bestEligible ranks terms (nil: q's) with sc.Tenant's copy and reads,
// with scan, cols of the best records eligible for sc under q's filters,
// at most q.Limit, best first, each given its score by scored. ok is
// false, and nothing is read, if the copy cannot rank them.
func bestEligible[T any](ctx context.Context, s *Store, sc custody.Scope, q custody.SearchQuery, terms []string, cols string,
	scan func(pgx.Rows) (string, T, error), scored func(T, float64) T) ([]T, bool, error) {
	scratch, _ := s.copies.scratch.Get().(*postings.Scratch)
	if scratch == nil {
		scratch = new(postings.Scratch)
	}
	defer s.copies.scratch.Put(scratch)
	rk, ok, err := s.rank(ctx, sc, q, terms, scratch)
	if !ok || err != nil {
		return nil, ok, err
	}
	var out []T
	err = s.eachRound(rk, q.Limit, func() bool { return len(out) >= q.Limit }, func(best []postings.Hit, ids []string) error {
		var a args
		rows, err := s.pool.Query(ctx, `SELECT `+cols+` FROM records r WHERE r.id = ANY(`+a.add(ids)+`::text[]) AND `+searchFilter(&a, sc, q), a...)
		if err != nil {
			return classify(err)
		}
		eligible := make(map[string]T, len(best))
		for rows.Next() {
			id, item, err := scan(rows)
			if err != nil {
				rows.Close()
				return classify(err)
			}
			eligible[id] = item
		}
		if err := rows.Err(); err != nil {
			return classify(err)
		}
		for i, id := range ids {
			if item, ok := eligible[id]; ok && len(out) < q.Limit {
				out = append(out, scored(item, best[i].Score))
			}
		}
		return nil
	})
	if err != nil {
		return nil, true, err
	}
	return out, true, nil
}

// eachRound calls round with the next best of rk's hits and their ids,
// asking about limit of them first and eight times more each round after
// (firstCheck, checkSize), until enough reports true or no hit is left.
func (s *Store) eachRound(rk ranked, limit int, enough func() bool, round func(best []postings.Hit, ids []string) error) error {
	hits := rk.hits
	for n := firstCheck(limit); !enough() && len(hits) > 0; n = checkSize(8 * n) {
		best := postings.Best(hits, n)
		hits = hits[len(best):]
		s.copies.asked.Add(int64(len(best)))
		ids := make([]string, len(best))
		for i, h := range best {
			ids[i] = rk.ids[h.Row]
		}
		if err := round(best, ids); err != nil {
			return err
		}
	}
	return nil
}

// visibleRecords is how many records sc may retrieve: counted by the
// tenant's copy when it can, else by PostgreSQL with the eligibility
// condition.
func (s *Store) visibleRecords(ctx context.Context, sc custody.Scope) (int64, error) {
	var n int64
	ok, err := s.withCopy(ctx, sc.Tenant, func(tc *tenantCopy) {
		n, _, _ = tc.x.Stats(nil, copyFilter(sc), 0)
	})
	if ok || err != nil {
		return n, err
	}
	var a args
	err = s.pool.QueryRow(ctx, `SELECT count(*) FROM records r WHERE NOT r.erased AND `+eligible(&a, sc), a...).Scan(&n)
	return n, classify(err)
}

// termMatchesCopy is TermMatches counted by the tenant's copy, among the
// records sc may retrieve as the copy has them (as visibleRecords counts
// them); false if the copy cannot count them.
func (s *Store) termMatchesCopy(ctx context.Context, sc custody.Scope, terms []string, bound int) ([]int, bool, error) {
	out := make([]int, len(terms))
	ok, err := s.withCopy(ctx, sc.Tenant, func(tc *tenantCopy) {
		_, _, holding := tc.x.Stats(terms, copyFilter(sc), bound)
		for i, t := range terms {
			if t != "" && !strings.ContainsRune(t, '"') { // a term the copy cannot hold: no record does
				out[i] = min(int(holding[i]), bound)
			}
		}
	})
	return out, ok, err
}

// copyFilter is the records sc may retrieve, as a copy's filter.
func copyFilter(sc custody.Scope) postings.Filter {
	return postings.Filter{Parts: copyParts(sc), Owner: sc.Subject, Now: sc.Now.UnixNano()}
}
