package embed_test

import (
	"context"
	"slices"
	"testing"

	"github.com/custody-mem/custody/embed"
)

func glove(t testing.TB) *embed.Glove {
	t.Helper()
	g, err := embed.NewGlove()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// rank scores records (id -> body, no key) against query and returns
// the ids with a positive score, best first.
func rank(g embed.Static, query string, records map[string]string) ([]string, []float32) {
	s := g.Scorer(query)
	ids := make([]string, 0, len(records))
	for id := range records {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		s.Add(id, "", records[id])
	}
	return s.Top(len(records))
}

// TestGloveParaphrase: a paraphrase sharing no word with the query ranks
// first, above unrelated texts.
func TestGloveParaphrase(t *testing.T) {
	g := glove(t)
	others := map[string]string{"garden": "the garden needs watering", "invoice": "invoice due friday", "concert": "concert tickets for saturday", "bread": "a recipe for bread"}
	for _, c := range []struct{ query, want string }{
		{"brief replies", "short answers"},
		{"automobile repair", "fixing the car"},
		{"physician appointment", "visit to the doctor"},
	} {
		recs := map[string]string{"want": c.want}
		for k, v := range others {
			recs[k] = v
		}
		ids, scores := rank(g, c.query, recs)
		if len(ids) == 0 || ids[0] != "want" || scores[0] <= 0 {
			t.Errorf("%q ranks %v (%v), want %q first", c.query, ids, scores, c.want)
		}
	}
}

// TestGloveIdentifiers: an identifier matches itself only, never another
// that shares its parts; its parts, searched alone, still find it; a word
// the table does not hold matches itself only. The twins: the exact
// identifier and the unknown word are found.
func TestGloveIdentifiers(t *testing.T) {
	g := glove(t)
	testStaticIdentifiers(t, g)
	recs := map[string]string{"zorb": "the zorblatt arrived", "parcel": "the parcel arrived"}
	if got, _ := rank(g, "zorblatt", recs); !slices.Equal(got, []string{"zorb"}) {
		t.Errorf("%q finds %v, want [zorb]", "zorblatt", got)
	}
}

// TestBuiltinIdentifiers: the same of the built-in embedder, whose
// random word vectors would otherwise let acct-7777 match ACCT-7778's
// record by their shared part acct. (Its vectors of unknown words are
// random, and can meet by chance: within a search, its candidates are
// the records the search index finds for the query's words.)
func TestBuiltinIdentifiers(t *testing.T) {
	b, err := embed.NewBuiltin(0)
	if err != nil {
		t.Fatal(err)
	}
	testStaticIdentifiers(t, b)
}

func testStaticIdentifiers(t *testing.T, g embed.Static) {
	recs := map[string]string{
		"a7777": "Savings account ACCT-7777 at the bank.",
		"a7778": "Checking account ACCT-7778 at the bank.",
		"iban":  "Pay rent to DE89370400440532013000",
		"iban2": "Old landlord DE89370400440532013001",
		"bob":   "Write to bob@example.com for invoices",
	}
	for _, c := range []struct {
		q    string
		want []string
	}{
		{"ACCT-7777", []string{"a7777"}},
		{"acct-7778", []string{"a7778"}},
		{"ACCT-7779", nil},
		{"7777", []string{"a7777"}},
		{"de89370400440532013000", []string{"iban"}},
		{"dave@example.com", nil},
		{"bob@example.com", []string{"bob"}},
	} {
		if got, _ := rank(g, c.q, recs); !slices.Equal(got, c.want) {
			t.Errorf("%q finds %v, want %v", c.q, got, c.want)
		}
	}
	// Beside a word both share, the exact identifier ranks its record
	// strictly first.
	ids, scores := rank(g, "ACCT-7777 account", recs)
	if len(ids) < 2 || ids[0] != "a7777" || ids[1] != "a7778" || !(scores[0] > scores[1]) {
		t.Errorf("ACCT-7777 account ranks %v (%v), want a7777 strictly above a7778", ids, scores)
	}
}

// TestGloveScores: an exact match scores 1, a query of function words
// finds nothing, and a record's key counts as its words.
func TestGloveScores(t *testing.T) {
	g := glove(t)
	s := g.Scorer("gardening tools")
	s.Add("exact", "", "Gardening tools, all of them")
	s.Add("stem", "", "a gardening tool")
	s.Add("key", "gardening", "tools")
	s.Add("none", "", "the and of")
	ids, scores := s.Top(10)
	if len(ids) != 3 || scores[0] != 1 || scores[1] != 1 || scores[2] != 1 {
		t.Errorf("Top = %v %v, want exact, stem and key at 1", ids, scores)
	}
	s = g.Scorer("what is it that they were")
	s.Add("x", "", "what is it that they were")
	if ids, _ := s.Top(10); len(ids) != 0 {
		t.Errorf("a query of function words finds %v", ids)
	}
}

func TestGloveEmbed(t *testing.T) {
	g := glove(t)
	if g.Dim() != 64 || g.Model() == "" {
		t.Fatalf("Dim %d Model %q", g.Dim(), g.Model())
	}
	vs, err := g.Embed(context.Background(), []string{"visit to the doctor", "visit to the doctor", "the and of", "zorblatt", "physician appointment", "invoice due friday"})
	if err != nil {
		t.Fatal(err)
	}
	if d := embed.Dot(vs[0], vs[0]); d < 0.999 || d > 1.001 {
		t.Errorf("|v|² = %f, want 1", d)
	}
	if d := embed.Dot(vs[0], vs[1]); d < 0.999 {
		t.Errorf("the same text gives different vectors (dot %f)", d)
	}
	for i := 2; i < 4; i++ {
		if d := embed.Dot(vs[i], vs[i]); d != 0 {
			t.Errorf("a text without a word of the table has |v|² = %f, want 0", d)
		}
	}
	if embed.Dot(vs[0], vs[4]) <= embed.Dot(vs[0], vs[5]) {
		t.Error("a paraphrase's mean vector is not nearer than an unrelated text's")
	}
	if e, err := embed.New(embed.Config{Provider: embed.ProviderGlove}); err != nil || e.Model() != g.Model() {
		t.Errorf("New(glove) = %v, %v", e, err)
	}
	if _, err := embed.New(embed.Config{Provider: embed.ProviderGlove, Dim: 64}); err == nil {
		t.Error("New(glove, Dim 64) succeeded")
	}
}

// TestGloveExpand: a query word's candidates come from its WordNet
// relatives and its nearest GloVe neighbours; an unknown word is only
// itself.
func TestGloveExpand(t *testing.T) {
	g := glove(t)
	got := g.Expand("pottery", 24)
	if len(got) == 0 || got[0] != "pottery" || len(got) > 24 || !slices.Contains(got, "earthenware") || !slices.Contains(got, "ceramics") {
		t.Errorf("Expand(pottery) = %v, want pottery first, earthenware (WordNet) and ceramics (GloVe), at most 24", got)
	}
	if got := g.Expand("zorblatt", 24); !slices.Equal(got, []string{"zorblatt"}) {
		t.Errorf("Expand(zorblatt) = %v", got)
	}
}
