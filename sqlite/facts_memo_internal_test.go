package sqlite

import (
	"maps"
	"path/filepath"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
)

// TestFactsMemoChangesOnlyTheCost: the lexical list of a store of facts
// and episodes notes its facts, so that Neighbours asks SQL about the
// episodes alone; what it answers is what it answers with nothing noted.
// The twin: the episodes, never noted, keep their neighbours and session.
func TestFactsMemoChangesOnlyTheCost(t *testing.T) {
	ctx := t.Context()
	st := openAt(t, filepath.Join(t.TempDir(), "c.db"))
	svc := services(t, st)[0]
	c, _ := user(t, svc, "alice")
	sess, err := svc.OpenSession(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	write := func(class custody.Class, session, body string) string {
		t.Helper()
		d, err := svc.Remember(ctx, c, custody.Candidate{Namespace: "chat", Class: class, Body: body, Channel: "user", Session: session})
		if err != nil {
			t.Fatal(err)
		}
		return d.Record.ID
	}
	var episodes, facts []string
	for _, body := range []string{"the boat trip to the lake", "we rented a boat", "the lake was cold", "the boat sank"} {
		facts = append(facts, write(custody.ClassFact, "", body+" (a note)"))
		episodes = append(episodes, write(custody.ClassEpisode, sess.ID, body))
	}
	sc := custody.Scope{Tenant: "acme", Subject: "alice", Now: time.Now()}
	q := custody.SearchQuery{Text: "boat lake", Limit: 100}
	lex, err := st.LexicalRanks(ctx, sc, q)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(lex))
	for i, r := range lex {
		ids[i] = r.ID
	}
	if len(ids) != 8 {
		t.Fatalf("the lexical list holds %d records, want the 8 written", len(ids))
	}
	if got := st.facts.Unknown(ids); len(got) != len(episodes) {
		t.Fatalf("after the lexical list, %d of its ids are not known as facts, want the %d episodes", len(got), len(episodes))
	}
	// The same list again takes its records from the texts kept: it notes
	// the facts all the same.
	st.facts.Forget()
	kept := st.search.textsKept.Load()
	if _, err := st.LexicalRanks(ctx, sc, q); err != nil {
		t.Fatal(err)
	}
	if st.search.textsKept.Load()-kept != 8 {
		t.Fatalf("the list again took %d records from the texts kept, want 8", st.search.textsKept.Load()-kept)
	}
	if got := st.facts.Unknown(ids); len(got) != len(episodes) {
		t.Fatalf("after the list from the texts kept, %d of its ids are not known as facts, want the %d episodes", len(got), len(episodes))
	}
	withMemo, err := st.Neighbours(ctx, sc, q, ids)
	if err != nil {
		t.Fatal(err)
	}
	st.facts.Forget()
	without, err := st.Neighbours(ctx, sc, q, ids)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(withMemo, without) {
		t.Fatalf("Neighbours with the facts noted: %v; with nothing noted: %v", withMemo, without)
	}
	for i, id := range episodes {
		n, ok := withMemo[id]
		if !ok || n.Session != sess.ID {
			t.Fatalf("episode %d has no neighbours or session: %+v", i, n)
		}
		if i > 0 && n.Prev != episodes[i-1] {
			t.Fatalf("episode %d's previous episode is %q, want %q", i, n.Prev, episodes[i-1])
		}
	}
	for _, id := range facts {
		if _, ok := withMemo[id]; ok {
			t.Fatalf("fact %s has neighbours", id)
		}
	}
}
