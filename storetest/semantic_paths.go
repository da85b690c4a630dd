package storetest

import (
	"context"
	"slices"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/embed"
)

// cosineEmbedder is the built-in embedder seen as one without structure
// (as the openai provider is): a query is one vector, ranked by cosine
// similarity over an exact scan of at most bound eligible records, beyond
// which the candidates are the lexical index's.
type cosineEmbedder struct {
	b     *embed.Builtin
	bound int
}

func (c cosineEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return c.b.Embed(ctx, texts)
}
func (c cosineEmbedder) Model() string     { return c.b.Model() }
func (c cosineEmbedder) Dim() int          { return c.b.Dim() }
func (c cosineEmbedder) ExactScanMax() int { return c.bound }

// An embedder without structure scans the eligible records' vectors
// exactly: the paraphrase is found and nothing ineligible is returned.
// Past its bound, the semantic list re-ranks the lexical index's
// candidates, eligibility and filters still inside the query: a
// paraphrase sharing no word is then out of reach, a record sharing one
// is found, and nothing ineligible is returned or crowds it out.
func testSemanticExactBound(t *testing.T, e *env) {
	b := builtinEmbedder(t, 0)
	e.withEmbedder(cosineEmbedder{b: b})
	sc := eligibilityScene(t, e)
	sc.check(t, e, true)

	// alice has two eligible records, bob hundreds: both past a bound of 1
	e.withEmbedder(cosineEmbedder{b: b, bound: 1})
	sc.check(t, e, false)
	got := itemIDs(e.ranked(sc.alice, custody.SearchInput{Query: sc.q, Mode: custody.ModeSemantic, Limit: custody.MaxSearchLimit}))
	if slices.Contains(got, sc.paraphrase) {
		t.Errorf("past the exact scan's bound, semantic search found %s, which shares no word with %q: the scan was not bounded", sc.paraphrase, sc.q)
	}
	if got := itemIDs(e.ranked(sc.alice, custody.SearchInput{Query: sc.q, Mode: custody.ModeSemantic, Namespace: "work"})); len(got) != 0 {
		t.Errorf("bounded semantic search in namespace work = %v; want nothing", got)
	}
}

// Filters (namespace, key prefix, metadata) apply inside the semantic
// candidate query: of three paraphrases of the query, each filter keeps
// exactly those that pass it, in semantic and hybrid mode.
func testSemanticFilters(t *testing.T, e *env) {
	e.withEmbedder(builtinEmbedder(t, 0))
	alice := e.user("acme", "alice")
	write := func(ns, key, body, project string) string {
		return e.remember(alice, custody.Candidate{Namespace: ns, Key: key, Class: custody.ClassFact, Body: body, Channel: custody.ChannelUser,
			Metadata: custody.Metadata{"project": project}}).ID
	}
	a := write("prefs", "style.length", "I like short answers", "apollo")
	b := write("prefs", "misc.length", "short answers are best", "zeus")
	c := write("work", "style.tone", "answers should be short", "apollo")
	e.fact(alice, "notes", "the garden needs watering on sunday")
	e.embedPending()
	cases := []struct {
		name string
		in   custody.SearchInput
		want []string
	}{
		{"none", custody.SearchInput{}, []string{a, b, c}},
		{"namespace prefs", custody.SearchInput{Namespace: "prefs"}, []string{a, b}},
		{"namespace prefix work", custody.SearchInput{NamespacePrefix: "work"}, []string{c}},
		{"key prefix style.", custody.SearchInput{Filters: custody.Filters{KeyPrefix: "style."}}, []string{a, c}},
		{"metadata project=apollo", custody.SearchInput{Filters: custody.Filters{Metadata: custody.Metadata{"project": "apollo"}}}, []string{a, c}},
		{"metadata project=zeus", custody.SearchInput{Filters: custody.Filters{Metadata: custody.Metadata{"project": "zeus"}}}, []string{b}},
		{"metadata project=hermes", custody.SearchInput{Filters: custody.Filters{Metadata: custody.Metadata{"project": "hermes"}}}, nil},
		{"key prefix style. in prefs", custody.SearchInput{Namespace: "prefs", Filters: custody.Filters{KeyPrefix: "style."}}, []string{a}},
	}
	for _, tc := range cases {
		for _, mode := range []custody.SearchMode{custody.ModeSemantic, custody.ModeHybrid} {
			in := tc.in
			in.Query, in.Mode = "brief replies", mode
			got := itemIDs(e.ranked(alice, in))
			slices.Sort(got)
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s, %s: %v, want %v", tc.name, mode, got, want)
			}
		}
	}
}
