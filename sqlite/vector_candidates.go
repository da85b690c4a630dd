package sqlite

import (
	"context"
	"database/sql"
	"slices"
	"strings"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/embed"
	"github.com/custody-mem/custody/internal/lexical"
	"github.com/custody-mem/custody/internal/postings"
)

// VectorCandidates ranks by vector, as VectorSearch does, the candidates
// the search index finds: the records eligible for sc that pass q's
// filters and hold one of the terms match in body or key, at most
// candidates of them, best BM25 first (the copy's ranking, or its
// equal without the copy: rankEligible). The words' rarity is counted as
// among the records sc may retrieve, never among any other.
func (s *Store) VectorCandidates(ctx context.Context, sc custody.Scope, q custody.SearchQuery, model string, vecs [][]float32, match []string, candidates int) ([]custody.Ranked, error) {
	var terms []string
	for _, t := range match {
		if t != "" && !strings.ContainsRune(t, '"') {
			terms = append(terms, t)
		}
	}
	if q.Limit <= 0 || len(vecs) == 0 || len(terms) == 0 || candidates <= 0 {
		return nil, nil
	}
	at, err := s.searchAt(ctx)
	if err != nil {
		return nil, unavailable(err)
	}
	cq := q
	cq.Limit = candidates
	best, visible, err := s.rankEligible(ctx, sc, cq, terms, at, readRanks, `EXISTS (SELECT 1 FROM vectors v WHERE v.rid = r.rid AND v.model = ?)`, model)
	if err != nil {
		return nil, err
	}
	scorer := embed.NewTermScorer[string](vecs)
	scorer.Corpus(int(visible))
	if err := s.scoreVectors(ctx, model, scorer, best); err != nil {
		return nil, err
	}
	return top(scorer, q.Limit), nil
}

// CandidateTexts reads the keys and bodies of the candidates the search
// index finds, as VectorCandidates does, for every record eligible for
// sc (no vector is needed): the texts are read by the query that checks
// the ranked records' eligibility, so only a record the caller may
// retrieve under q's filters is ever read, or taken from the texts kept
// in memory for the records the copy ranks as eligible
// (search_texts.go).
func (s *Store) CandidateTexts(ctx context.Context, sc custody.Scope, q custody.SearchQuery, match []string, candidates int, fn func(c *custody.CandidateText)) (int, error) {
	var terms []string
	for _, t := range match {
		if t != "" && !strings.ContainsRune(t, '"') {
			terms = append(terms, t)
		}
	}
	if len(terms) == 0 || candidates <= 0 {
		return 0, nil
	}
	at, err := s.searchAt(ctx)
	if err != nil {
		return 0, unavailable(err)
	}
	cq := q
	cq.Limit = candidates
	best, visible, err := s.rankEligible(ctx, sc, cq, terms, at, readTexts, "")
	if err != nil {
		return 0, err
	}
	// The texts are read with the eligibility check, in the same query,
	// or kept from an earlier one: a record is scored only if the caller
	// may retrieve it under q's filters. A record read is kept with the
	// form fn derives (or its text, if none); a kept form fn cannot score
	// is given again with its text, read now.
	var c custody.CandidateText // one for every candidate: fn keeps none
	var again []postings.Hit
	for i := range best {
		b := &best[i]
		c = custody.CandidateText{ID: b.id, Key: b.key, Body: b.body, Form: b.form, Partial: b.partial}
		fn(&c)
		switch {
		case b.partial && c.Form == nil:
			again = append(again, postings.Hit{Row: uint32(b.rid)})
		case b.read:
			b.form = c.Form
		}
	}
	s.search.texts.keep(slices.Values(best))
	if len(again) > 0 {
		filter, fargs := searchFilter(sc, cq)
		rows, err := s.readMissing(ctx, filter, fargs, again, true, nil)
		if err != nil {
			return 0, err
		}
		for _, b := range rows {
			c = custody.CandidateText{ID: b.id, Key: b.key, Body: b.body}
			fn(&c)
		}
	}
	return int(visible), nil
}

// scoreVectors gives scorer the vectors of model of the records best.
func (s *Store) scoreVectors(ctx context.Context, model string, scorer *embed.TermScorer[string], best []eligibleHit) error {
	ids := make(map[int64]string, len(best))
	for _, b := range best {
		ids[b.rid] = b.id
	}
	for rest := best; len(rest) > 0; {
		n := checkSize(len(rest))
		chunk := rest[:min(n, len(rest))]
		rest = rest[len(chunk):]
		args := make([]any, 0, n)
		for _, b := range chunk {
			args = append(args, b.rid)
		}
		for len(args) < n {
			args = append(args, args[0])
		}
		rows, err := s.reader().QueryContext(ctx, `SELECT v.rid, v.vec FROM vectors v WHERE v.rid IN (`+placeholders(n)+`) AND v.model = ?`, append(args, model)...)
		if err != nil {
			return unavailable(err)
		}
		for rows.Next() {
			var rid int64
			var b sql.RawBytes // scored before the next row: no copy
			if err := rows.Scan(&rid, &b); err != nil {
				rows.Close()
				return unavailable(err)
			}
			scorer.Add(ids[rid], b)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return unavailable(err)
		}
	}
	return nil
}

// LexicalRanks is Search's ranking (the same query) without reading the
// records.
func (s *Store) LexicalRanks(ctx context.Context, sc custody.Scope, q custody.SearchQuery) ([]custody.Ranked, error) {
	if len(lexical.Query(q.Text, maxQueryTerms)) == 0 || q.Limit <= 0 {
		return nil, nil
	}
	at, err := s.searchAt(ctx)
	if err != nil {
		return nil, unavailable(err)
	}
	return s.lexicalRanked(ctx, sc, q, at)
}

// ftsTerms is the FTS5 query for records holding any of the lexical
// terms (internal/lexical) in body or key; "" for none.
func ftsTerms(terms []string) string {
	quoted := make([]string, 0, len(terms))
	for _, t := range terms {
		if t != "" && !strings.ContainsRune(t, '"') {
			quoted = append(quoted, `"`+t+`"`)
		}
	}
	if len(quoted) == 0 {
		return ""
	}
	return `{body key} : (` + strings.Join(quoted, " OR ") + `)`
}
