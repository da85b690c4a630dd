package custody

import (
	"context"
	"math"
	"sort"
	"strings"

	"github.com/custody-mem/custody/internal/lexical"
)

// Pseudo-relevance feedback (RM3): a hybrid search takes the first
// records of its lexical list as relevant, finds the words that weigh
// most in them, and adds the lexical list of those words to the fusion
// (the query's own words already made the lexical list: fusing the two
// is RM3's interpolation of the original and the feedback query). A
// record that says what the best matches say, in words the query does
// not use, is found that way. Only rare words are taken, so the expanded
// list reads at most feedbackWords × feedbackMaxMatches index matches
// however large the store. Settings, measured on the LoCoMo development
// conversations (docs/benchmarks.md):
const (
	// feedbackRecords is how many of the lexical list's first records
	// lend words.
	feedbackRecords = 3
	// feedbackWords is how many words the query is expanded with, at
	// most.
	feedbackWords = 10
	// feedbackPower weighs each feedback record by its score relative to
	// the first one's, to this power: the best match lends the most.
	feedbackPower = 4
	// feedbackMaxMatches leaves out of the feedbackWords weightiest
	// words those that more records than this hold: a common word says
	// little, and would make the expanded query read every record
	// holding it.
	feedbackMaxMatches = 30
)

// feedbackList is the lexical list of the feedback words of first, q's
// lexical list: nil when first is empty or lends no rare new word. The
// words come only from records the caller may retrieve: the feedback
// records are read with the caller's scope and q's filters, inside the
// query (RankedRecords), and the feedback list is made by the same
// candidate query as first, with q's filters, so eligibility holds in it
// as in first.
//
// A query naming an identifier (an account number, an IBAN, an address,
// a key) asks for that value and is not expanded: the words of
// ACCT-7777's record ("savings account at the bank") would otherwise
// bring ACCT-7778's.
func (s *Service) feedbackList(ctx context.Context, vs VectorStore, sc Scope, q SearchQuery, first []Ranked) ([]Ranked, error) {
	first = first[:min(len(first), feedbackRecords)]
	tc, ok := vs.(TermCounter)
	if len(first) == 0 || !ok || namesIdentifier(q.Text) {
		return nil, nil
	}
	ids := make([]string, len(first))
	for i, r := range first {
		ids[i] = r.ID
	}
	recs, err := vs.RankedRecords(ctx, sc, q, ids)
	if err != nil {
		return nil, err
	}
	bodies := make(map[string]string, len(recs))
	for _, r := range recs {
		bodies[r.ID] = r.Body
	}
	docs := make([]feedbackDoc, 0, len(first))
	for _, r := range first {
		if b, ok := bodies[r.ID]; ok {
			docs = append(docs, feedbackDoc{body: b, score: r.Score})
		}
	}
	cands := expansion(q.Text, docs, feedbackWords)
	if len(cands) == 0 {
		return nil, nil
	}
	terms := make([]string, len(cands))
	for i, w := range cands {
		terms[i] = w.Term
	}
	counts, err := tc.TermMatches(ctx, sc, terms, feedbackMaxMatches+1)
	if err != nil {
		return nil, err
	}
	words := make([]string, 0, feedbackWords)
	for i, w := range cands {
		if i < len(counts) && counts[i] <= feedbackMaxMatches {
			words = append(words, w.Form)
		}
	}
	if len(words) == 0 {
		return nil, nil
	}
	eq := q
	eq.Text = strings.Join(words, " ")
	return vs.LexicalRanks(ctx, sc, eq)
}

// TermCounter is implemented by a store whose search index can count the
// records holding a term cheaply; feedback needs it, to leave out common
// words.
type TermCounter interface {
	// TermMatches is, for each lexical term (internal/lexical), how many
	// records sc may retrieve hold it in body or key (a word's rarity,
	// as BM25's inverse document frequency counts it, among the same
	// records), counting at most bound. A record sc may not retrieve
	// never counts (rule 4): the words feedback keeps would otherwise
	// tell whether another user's record holds one.
	TermMatches(ctx context.Context, sc Scope, terms []string, bound int) ([]int, error)
}

// feedbackDoc is one feedback record: its body and its lexical score.
type feedbackDoc struct {
	body  string
	score float64
}

// expansion is the n words, not terms of query, that weigh most in docs
// (best first), as RM1 weighs them: a term's weight is the sum over the
// records of its share of the record's terms times the record's weight
// (its score relative to the first record's, to feedbackPower). Each term
// comes with the form it was first written in, which a query finds it by.
func expansion(query string, docs []feedbackDoc, n int) []lexical.Word {
	if len(docs) == 0 || n <= 0 {
		return nil
	}
	inQuery := map[string]bool{}
	for _, t := range lexical.Query(query, -1) {
		inQuery[t] = true
	}
	weight := map[string]float64{}
	form := map[string]string{}
	top := docs[0].score
	for _, d := range docs {
		words := lexical.Words(d.body)
		if len(words) == 0 {
			continue
		}
		dw := 1.0
		if top > 0 && d.score > 0 {
			dw = math.Pow(min(d.score/top, 1), feedbackPower)
		}
		share := dw / float64(len(words))
		for _, w := range words {
			if inQuery[w.Term] {
				continue
			}
			weight[w.Term] += share
			if _, ok := form[w.Term]; !ok {
				form[w.Term] = w.Form
			}
		}
	}
	terms := make([]string, 0, len(weight))
	for t := range weight {
		terms = append(terms, t)
	}
	sort.Slice(terms, func(i, j int) bool {
		if weight[terms[i]] != weight[terms[j]] {
			return weight[terms[i]] > weight[terms[j]]
		}
		return terms[i] < terms[j]
	})
	out := make([]lexical.Word, 0, min(n, len(terms)))
	for _, t := range terms[:min(n, len(terms))] {
		out = append(out, lexical.Word{Term: t, Form: form[t]})
	}
	return out
}

// namesIdentifier reports whether text holds an identifier, as the
// search index reads one (internal/lexical): a token with a digit or a
// joiner such as '.', '@' or '_'.
func namesIdentifier(text string) bool {
	found := false
	lexical.EachWord(text, false, func(form string) { found = found || lexical.IsIdentifier(form) })
	return found
}
