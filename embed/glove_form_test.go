package embed_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/custody-mem/custody/embed"
	"pgregory.net/rapid"
)

// formWords are the words texts and queries are made of: the table's
// words (common and rare, one stem in several forms), function words, and
// what the table lacks as real content spells it: names, numbers,
// identifiers, fullwidth and accented letters, HTML references, JSON.
var formWords = []string{
	"the", "a", "of", "and", "is", "was", "what", "when", "did", "I", "you",
	"reply", "replies", "replied", "answer", "short", "brief", "invoice", "invoices", "payee", "account",
	"bank", "camping", "campfire", "hike", "hiking", "kids", "children", "painting", "painted", "sunset",
	"Caroline", "Melanie", "ACCT-7777", "ACCT-7778", "acct", "7777", "2023", "bob@example.com", "payee.iban",
	"ＡＣＣＴ－７７７７", "café", "naïve", "&amp;", "&#65;cct", `{"payee":"ACCT-7777"}`, "follow-up", "zyxwv",
	// the spellings real content has: a no-break space and hyphen inside
	// an identifier, zero-width and bidi characters, other digit sets,
	// number notations, escaped and nested structured values
	"ACCT 7777", "ACCT‑7777", "AC​CT-77‍77", "‮ACCT-7777‬", "ACCT-٧٧٧٧", "१२३४",
	"1,000.50", "1.000,50", "1e3", "$1,200", `{"iban":"DE89\u00a03704","amount":[1200,"EUR"]}`, "pay&#x65;e",
}

// A record scored from its form scores exactly as from its text, for any
// text and any query.
func TestGloveFormScoresAsTheText(t *testing.T) {
	g, err := embed.NewGlove()
	if err != nil {
		t.Fatal(err)
	}
	text := rapid.Custom(func(t *rapid.T) string {
		return strings.Join(rapid.SliceOfN(rapid.SampledFrom(formWords), 0, 24).Draw(t, "words"), " ")
	})
	rapid.Check(t, func(rt *rapid.T) {
		query := text.Draw(rt, "query")
		keys := rapid.SliceOfN(rapid.SampledFrom([]string{"", "payee", "k1", "ACCT-7777"}), 1, 12).Draw(rt, "keys")
		byText := g.Scorer(query).(embed.FormScorer)
		byForm := g.Scorer(query).(embed.FormScorer)
		formed := g.Scorer(query + " other words").(embed.FormScorer) // forms are any query's
		for i, key := range keys {
			body := text.Draw(rt, fmt.Sprintf("body%d", i))
			id := fmt.Sprint(i)
			byText.Add(id, key, body)
			if !byForm.AddForm(id, formed.Form(key, body)) {
				rt.Fatal("a glove scorer refused a glove form")
			}
		}
		ids, scores := byText.Top(len(keys))
		fids, fscores := byForm.Top(len(keys))
		if fmt.Sprint(ids, scores) != fmt.Sprint(fids, fscores) {
			rt.Fatalf("query %q: from the texts %v %v, from the forms %v %v", query, ids, scores, fids, fscores)
		}
	})
}

// A form is the scorer's own: another embedder's scorer refuses it, and
// a glove scorer refuses another's.
func TestGloveFormRefusedElsewhere(t *testing.T) {
	g, err := embed.NewGlove()
	if err != nil {
		t.Fatal(err)
	}
	f := g.Scorer("payee").(embed.FormScorer).Form("", "the payee account")
	s := g.Scorer("payee").(embed.FormScorer)
	if !s.AddForm("1", f) {
		t.Fatal("a glove scorer refused its own form")
	}
	if ids, _ := s.Top(1); len(ids) != 1 {
		t.Fatalf("the form scored nothing: %v", ids)
	}
	for _, other := range []embed.Form{nil, {1, 2, 3}, append(embed.Form{0xff, 0xff, 0xff, 0x7f}, f[4:]...)} {
		if s.AddForm("2", other) {
			t.Fatalf("a glove scorer took a form it did not derive: %v", other)
		}
	}
	if len(f) == 0 {
		t.Fatal("a form of no bytes")
	}
}
