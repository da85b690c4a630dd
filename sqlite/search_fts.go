package sqlite

import (
	"context"
	"database/sql/driver"
	"fmt"
	"slices"
	"strings"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/internal/lexical"
	"github.com/custody-mem/custody/internal/postings"
	msqlite "modernc.org/sqlite"
)

// Ranking without the copy (while it is built, stale or past its memory
// bound): FTS5 finds the eligible records holding a query term, and the
// store scores them here by the BM25 the copy computes, to the bit, with
// the statistics of the records the caller may retrieve (its eligible
// records under no filter: their number, their terms, and those holding
// each query term), read with the eligibility condition inside each
// query. FTS5's own bm25() counts every record of the store, any tenant
// and any state, and is therefore never used: a score it gave would
// change with records the caller cannot see (rule 4).
//
// It costs more than bm25() did: the caller's eligible records are
// counted (their lengths read from records_fts_docsize), and every
// eligible match is read and its terms found again.

// docLenFunc is the SQL function that gives the number of terms a row of
// records_fts holds, from its docsize blob (a varint per column).
const docLenFunc = "custody_doclen"

func init() {
	msqlite.MustRegisterDeterministicScalarFunction(docLenFunc, 1, func(_ *msqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		b, ok := args[0].([]byte)
		if !ok {
			if args[0] == nil {
				return int64(0), nil
			}
			return nil, fmt.Errorf("%s: want a blob, got %T", docLenFunc, args[0])
		}
		var n int64
		for len(b) > 0 {
			v, k := varintLen(b)
			if k == 0 {
				return nil, fmt.Errorf("%s: a docsize blob that ends inside a varint", docLenFunc)
			}
			n, b = n+int64(v), b[k:]
		}
		return n, nil
	})
}

// varintLen decodes an SQLite varint (as FTS5 writes them) at the start
// of b, and its length (0 if b ends first).
func varintLen(b []byte) (uint64, int) {
	var v uint64
	for i := range min(len(b), 9) {
		if i == 8 {
			return v<<8 | uint64(b[i]), 9
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
}

// visibleStats are the statistics of sc's eligible records: how many, how
// many terms they hold, and how many hold each of terms, counting at most
// bound of each (< 0: all).
func (s *Store) visibleStats(ctx context.Context, sc custody.Scope, terms []string, bound int) (rows, tokens int64, holding []int64, err error) {
	vis, vargs := eligible(len(sc.Groups)), eligibleArgs(sc)
	cols := []string{`(SELECT count(*) FROM records r JOIN records_fts_docsize d ON d.id = r.rid WHERE ` + vis + `)`,
		`(SELECT COALESCE(sum(` + docLenFunc + `(d.sz)), 0) FROM records r JOIN records_fts_docsize d ON d.id = r.rid WHERE ` + vis + `)`}
	args := append(slices.Clone(vargs), vargs...)
	holding = make([]int64, len(terms))
	dst := []any{&rows, &tokens}
	for i, t := range terms {
		m := ftsTerms([]string{t})
		if m == "" {
			cols = append(cols, "0")
		} else {
			limit := ""
			if bound >= 0 {
				limit = ` LIMIT ?`
			}
			cols = append(cols, `(SELECT count(*) FROM (SELECT 1 FROM records_fts JOIN records r ON r.rid = records_fts.rowid
 WHERE records_fts MATCH ? AND `+vis+limit+`))`)
			args = append(append(args, m), vargs...)
			if bound >= 0 {
				args = append(args, bound)
			}
		}
		dst = append(dst, &holding[i])
	}
	if err := s.reader().QueryRowContext(ctx, `SELECT `+strings.Join(cols, ", "), args...).Scan(dst...); err != nil {
		return 0, 0, nil, unavailable(err)
	}
	return rows, tokens, holding, nil
}

// rankFTS is bestEligible without the copy: the best q.Limit records
// eligible for sc under q's filters (and also, with its arguments) that
// hold one of terms, best first, scored as the copy scores them; and the
// number of records sc may retrieve. Their keys and bodies come with them.
func (s *Store) rankFTS(ctx context.Context, sc custody.Scope, q custody.SearchQuery, terms []string, also string, alsoArgs ...any) ([]eligibleHit, int64, error) {
	match := ftsTerms(terms)
	if match == "" {
		return nil, 0, nil
	}
	terms = slices.DeleteFunc(slices.Clone(terms), func(t string) bool { return t == "" || strings.ContainsRune(t, '"') })
	N, tokens, holding, err := s.visibleStats(ctx, sc, terms, -1)
	if err != nil || N == 0 {
		return nil, N, err
	}
	filter, fargs := searchFilter(sc, q)
	if also != "" {
		filter, fargs = filter+` AND `+also, append(fargs, alsoArgs...)
	}
	rows, err := s.reader().QueryContext(ctx, `SELECT r.rid, r.id, r.body, r.key FROM records_fts JOIN records r ON r.rid = records_fts.rowid
 WHERE records_fts MATCH ? AND `+filter, append([]any{match}, fargs...)...)
	if err != nil {
		return nil, N, unavailable(err)
	}
	defer rows.Close()
	avgdl := float64(tokens) / float64(N)
	idf := make([]float64, len(terms))
	for i, n := range holding {
		idf[i] = postings.IDF(N, n)
	}
	var hits []eligibleHit
	for rows.Next() {
		var h eligibleHit
		if err := rows.Scan(&h.rid, &h.id, &h.body, &h.key); err != nil {
			return nil, N, unavailable(err)
		}
		bt, kt := lexical.Document(h.body), lexical.Document(h.key)
		w := postings.Weights(bt, kt)
		D := float64(len(bt) + len(kt))
		matched := false
		for i, t := range terms {
			if f, ok := w[t]; ok && holding[i] > 0 {
				h.score = h.score + postings.Term(idf[i], float64(f)*0.5, D, avgdl)
				matched = true
			}
		}
		if matched {
			hits = append(hits, h)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, N, unavailable(err)
	}
	slices.SortFunc(hits, func(a, b eligibleHit) int {
		switch {
		case a.score > b.score || a.score == b.score && a.rid < b.rid:
			return -1
		case a.score == b.score && a.rid == b.rid:
			return 0
		}
		return 1
	})
	return hits[:min(len(hits), q.Limit)], N, nil
}
