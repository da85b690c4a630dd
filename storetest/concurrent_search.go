package storetest

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/embed"
)

// Searches running at once answer as each would alone: four goroutines
// run the same hybrid and semantic searches in different orders, with
// the default embedder (glove), over a store whose texts or forms the
// first searches kept, and each answer (ids, order and scores) is the one
// the search gave alone. Under -race this also checks that nothing a
// search shares with the others (the embedder's caches, the kept texts
// and forms, the pooled scorers) is written while another reads it.
func testSearchesAtOnce(t *testing.T, e *env) {
	glove, err := embed.NewGlove()
	if err != nil {
		t.Fatal(err)
	}
	e.withEmbedder(glove)
	alice := e.user("acme", "alice")
	topics := []string{
		"paid the plumber's invoice for the kitchen sink",
		"booked a flight to Lisbon for the conference",
		"the dentist moved the appointment to Friday",
		"Caroline adopted a puppy from the shelter",
		"the quarterly budget report is due next week",
		"went hiking in the mountains with Melanie",
		"the payroll run failed because of a missing account",
		"bought a new guitar and started lessons",
	}
	for i := range 160 {
		e.remember(alice, custody.Candidate{Namespace: "chat", Class: custody.ClassEpisode, Channel: "user",
			Body: fmt.Sprintf("%s (note %d)", topics[(i*5)%len(topics)], i)})
	}
	type key struct {
		query string
		mode  custody.SearchMode
	}
	var keys []key
	for _, q := range []string{"invoice for the plumber", "trip to a conference", "pet adoption", "money problems at work", "music lessons", "doctor visit"} {
		keys = append(keys, key{q, custody.ModeHybrid}, key{q, custody.ModeSemantic})
	}
	type answer struct {
		ids    []string
		scores map[string]float64
	}
	search := func(k key) (answer, error) {
		res, err := e.svc.SearchRanked(e.ctx, alice, custody.SearchInput{Query: k.query, Mode: k.mode, Limit: 10})
		if err != nil {
			return answer{}, err
		}
		a := answer{scores: map[string]float64{}}
		for _, r := range res.Items {
			a.ids = append(a.ids, r.ID)
			a.scores[r.ID] = r.Score
		}
		return a, nil
	}
	alone := map[key]answer{}
	for range 2 { // the second round scores by what the first kept
		for _, k := range keys {
			a, err := search(k)
			if err != nil || len(a.ids) == 0 {
				t.Fatalf("%v alone: %v, %v", k, a.ids, err)
			}
			if b, ok := alone[k]; ok && (!slices.Equal(a.ids, b.ids) || !maps.Equal(a.scores, b.scores)) {
				t.Fatalf("%v alone gave %v, then %v", k, b.ids, a.ids)
			}
			alone[k] = a
		}
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for round := range 3 {
				for i := range keys {
					k := keys[(i*(g+1)+round)%len(keys)]
					a, err := search(k)
					if err != nil {
						t.Errorf("%v at once: %v", k, err)
						return
					}
					if want := alone[k]; !slices.Equal(a.ids, want.ids) || !maps.Equal(a.scores, want.scores) {
						t.Errorf("%v at once: %v %v; alone %v %v", k, a.ids, a.scores, want.ids, want.scores)
						return
					}
				}
			}
		})
	}
	wg.Wait()
}
