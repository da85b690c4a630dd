package embed_test

import (
	"fmt"
	"testing"

	"github.com/custody-mem/custody/embed"
)

// Any query and any record, however spelled (invalid UTF-8, control and
// format characters, scripts the tables do not hold, JSON), score without
// a panic, and a record scored from its glove form scores exactly as from
// its text.
//
//	go test ./embed -run '^$' -fuzz FuzzGloveForm -fuzztime 5m
func FuzzGloveForm(f *testing.F) {
	g, err := embed.NewGlove()
	if err != nil {
		f.Fatal(err)
	}
	b, err := embed.NewBuiltin(0)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range formWords {
		f.Add("short replies about "+s, "payee", "brief answers: "+s)
	}
	f.Add("\xff\xfe", "\x00", "ACCT\xc0-7777 \u202e")
	f.Fuzz(func(t *testing.T, query, key, body string) {
		byText := g.Scorer(query).(embed.FormScorer)
		byForm := g.Scorer(query).(embed.FormScorer)
		byText.Add("r", key, body)
		byText.Add("other", "", "a brief reply about the invoice")
		if !byForm.AddForm("r", byForm.Form(key, body)) {
			t.Fatal("a glove scorer refused its own form")
		}
		byForm.AddForm("other", byForm.Form("", "a brief reply about the invoice"))
		ids, scores := byText.Top(2)
		fids, fscores := byForm.Top(2)
		if fmt.Sprint(ids, scores) != fmt.Sprint(fids, fscores) {
			t.Fatalf("query %q, key %q, body %q: from the texts %v %v, from the forms %v %v", query, key, body, ids, scores, fids, fscores)
		}
		bs := b.Scorer(query)
		bs.Add("r", key, body)
		bs.Top(1)
	})
}
