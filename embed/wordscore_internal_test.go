package embed

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/custody-mem/custody/internal/lexical"
)

// TestEachWordAgreesWithLexical: the word scorer reads a text's words as
// the search index does: the terms of its words are the document's.
func TestEachWordAgreesWithLexical(t *testing.T) {
	for _, text := range []string{
		"Savings account ACCT-7777 at the bank.",
		"Write to bob@example.com; follow-up on payee.iban, ACCT-7777.",
		"Caroline (8 May 2023): I went to the LGBTQ support group yesterday!",
		"Müller's café — naïve résumé, 東京 2024",
		"a--b _x_ 3.14 -- e-mail re-entry",
	} {
		var got []string
		lexical.EachWord(text, true, func(form string) {
			for _, t := range lexical.Query(form, 1) {
				if !slices.Contains(got, t) {
					got = append(got, t)
				}
			}
		})
		want := lexical.Document(text)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%q: words %v, the index's terms %v", text, got, want)
		}
	}
}

// TestWordVectorsTable: the table holds the most frequent words in
// order, and its similarities make sense.
func TestWordVectorsTable(t *testing.T) {
	g, err := loadWordVectors()
	if err != nil {
		t.Fatal(err)
	}
	if g.Len() != 50000 || g.dim != 64 || g.Row("the") != 0 || g.Row("ACCT") != -1 {
		t.Fatalf("Len %d dim %d row(the) %d", g.Len(), g.dim, g.Row("the"))
	}
	near, _ := g.Similarity("physician", "doctor")
	far, _ := g.Similarity("physician", "invoice")
	self, _ := g.Similarity("doctor", "doctor")
	if !(near > 0.6 && far < 0.3 && self > 0.999) {
		t.Errorf("physician·doctor %.3f, physician·invoice %.3f, doctor·doctor %.3f", near, far, self)
	}
}

// TestWordScorerRemembersBounded: past maxRemembered distinct words, a
// word is still scored right.
func TestWordScorerRemembersBounded(t *testing.T) {
	g, err := loadWordVectors()
	if err != nil {
		t.Fatal(err)
	}
	s := g.scorer("doctor", defaultWordParams)
	var b strings.Builder
	for i := range maxRemembered + 10 {
		b.WriteString("x")
		b.WriteString(strings.Repeat("q", i%7))
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString(string(rune('a' + i/26%26)))
		b.WriteString(string(rune('a' + i/676%26)))
		b.WriteString(" ")
	}
	s.score(b.String())
	if s.kept > maxRemembered || len(s.memo) > maxRemembered || len(s.sims) > maxRemembered*len(s.q) {
		t.Fatalf("remembers %d words (%d unknown, %d similarities), more than %d", s.kept, len(s.memo), len(s.sims), maxRemembered)
	}
	fresh := g.scorer("doctor", defaultWordParams)
	for _, text := range []string{"the physician", "doctor", "an invoice"} {
		if got, want := s.score(text), fresh.score(text); got != want {
			t.Errorf("%q scores %v when full, %v fresh", text, got, want)
		}
	}
}

// BenchmarkGloveScorer is one query's semantic list: a scorer for a
// query of four words that count, 400 candidate texts of 35 words
// (drawn from the table by frequency, function words among them) scored.
//
//	go test ./embed -run '^$' -bench GloveScorer -benchmem
func BenchmarkGloveScorer(b *testing.B) {
	g, texts, query := gloveBenchTexts(b)
	cpu0 := cpuTime()
	for b.Loop() {
		s := g.scorer(query, defaultWordParams)
		for _, t := range texts {
			s.score("", t)
		}
		s.release() // as GloveScorer.Top does
	}
	// The process's CPU time, less inflated than the wall clock's on a
	// shared machine (the benchmark runs on one goroutine).
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N)/float64(len(texts)), "cpu-ns/candidate")
}

// BenchmarkGloveFormScorer is BenchmarkGloveScorer from the texts' forms,
// derived once (as a store keeping them does), and reports their memory.
//
//	go test ./embed -run '^$' -bench 'Glove(Form)?Scorer$'
func BenchmarkGloveFormScorer(b *testing.B) {
	g, texts, query := gloveBenchTexts(b)
	forms := make([]Form, len(texts))
	bytes := 0
	for i, t := range texts {
		forms[i] = g.form("", t)
		bytes += len(forms[i])
	}
	cpu0 := cpuTime()
	for b.Loop() {
		s := g.scorer(query, defaultWordParams)
		for _, f := range forms {
			s.scoreForm(f)
		}
		s.release()
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N)/float64(len(texts)), "cpu-ns/candidate")
	b.ReportMetric(float64(bytes)/float64(len(texts)), "form-bytes/candidate")
}

// gloveBenchTexts are 400 candidate texts of 35 words drawn by Zipf's
// law from the table, with about as many distinct words (some 1,500) as
// 400 turns of a LoCoMo conversation have, and a query.
func gloveBenchTexts(b *testing.B) (*wordVectors, []string, string) {
	g, err := loadWordVectors()
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	zipf := rand.NewZipf(rng, 1.4, 2, uint64(g.Len()-1))
	texts := make([]string, 400)
	distinct := map[string]bool{}
	for i := range texts {
		var t strings.Builder
		t.WriteString("Caroline (8 May 2023):")
		for range 35 {
			w := g.word(int32(zipf.Uint64()))
			distinct[w] = true
			t.WriteString(" ")
			t.WriteString(w)
		}
		texts[i] = t.String()
	}
	b.Logf("%d distinct words in %d texts", len(distinct), len(texts))
	return g, texts, "what did caroline research about adoption agencies"
}

// cpuTime is the process's user and system CPU time, in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkLoadWordVectors is reading the embedded table: the time one
// load takes, and the heap it keeps (retained-MB).
//
//	go test ./embed -run '^$' -bench LoadWordVectors -benchmem
func BenchmarkLoadWordVectors(b *testing.B) {
	var keep *wordVectors
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	cpu0 := cpuTime()
	for b.Loop() {
		var err error
		if keep, err = readWordVectors(gloveTable); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "retained-MB")
	runtime.KeepAlive(keep)
}

// BenchmarkGloveForm is deriving the forms of BenchmarkGloveScorer's
// texts, which a store keeping them does once a text: against scoring
// the texts themselves.
//
//	go test ./embed -run '^$' -bench 'GloveForm$'
func BenchmarkGloveForm(b *testing.B) {
	g, texts, _ := gloveBenchTexts(b)
	cpu0 := cpuTime()
	for b.Loop() {
		for _, t := range texts {
			g.form("", t)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N)/float64(len(texts)), "cpu-ns/candidate")
}
