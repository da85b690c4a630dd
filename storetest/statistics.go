package storetest

import (
	"fmt"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
)

// Every statistic that ranks a caller's results (BM25's record count,
// mean length and the records holding each word; feedback's count of the
// records holding a word; the semantic list's word rarity) is computed
// from the records the caller may retrieve, and from no other: a record
// of another tenant, another user's owner-only record, a record shared
// with a group the caller is not in, a quarantined record, an expired
// one, and an older version of a key, each holding the query's words,
// leave the caller's scores and order bit-identical to those of a store
// without them, in every mode (design rule 4). Otherwise a score would
// tell whether someone else's record holds a word (an IBAN, an e-mail
// address). Its twin: a record the caller may retrieve (its own, or one
// shared with its tenant) changes them, as a word's rarity should.
func testSearchStatisticsPrivacy(t *testing.T, e *env) {
	clean := &env{t: t, ctx: e.ctx, store: e.open(t), clock: NewClock(Start), open: e.open}
	clean.svc = NewService(t, clean.store, clean.clock)
	noisy := e
	queries := []string{"zephyr quokka", "quokka", "marlin ledger", "ACCT-4242", "zephyr", "heron rowing", "met"}
	type caller struct{ alice, bob *custody.Caller }
	setup := func(e *env, hidden bool) caller {
		e.withEmbedder(builtinEmbedder(t, 0))
		alice, bob := e.user("acme", "alice", "fin"), e.user("acme", "bob", "ops")
		c := caller{alice, bob}
		other := e.user("other", "alice", "fin")
		mail := e.act(e.principal("acme", "mail", []string{"agent"}, []string{"tool:email"}, nil), "alice")
		rev := e.act(e.principal("acme", "rev", []string{"reviewer"}, nil, nil), "")
		invisible := func() {
			if !hidden {
				return
			}
			for _, b := range []string{"zephyr quokka ACCT-4242", "quokka marlin ledger heron"} {
				e.fact(other, "notes", b)
			}
			e.fact(bob, "notes", "zephyr quokka marlin ACCT-4242 heron")
			// Common enough among bob's records to be no feedback word
			// (feedbackMaxMatches) if they counted; rare among alice's.
			for i := range 32 {
				e.fact(bob, "notes", fmt.Sprintf("harbour crane %d", i))
			}
			e.remember(bob, custody.Candidate{Namespace: "notes", Class: custody.ClassFact, Body: "quokka ledger rowing zephyr",
				Channel: custody.ChannelUser, Audience: "group:ops"})
			q := e.remember(mail, custody.Candidate{Namespace: "notes", Class: custody.ClassFact, Body: "zephyr quokka ACCT-4242 marlin", Channel: "tool:email"})
			if q.State != custody.StateQuarantined {
				t.Fatalf("the email's fact is %s, want quarantined", q.State)
			}
			// Records alice could see once, indexed, then no more: bob's
			// note shared with the tenant, which he retires, and (below)
			// the older versions of alice's key, each replaced by a newer
			// one after a search indexed it.
			shared := e.remember(bob, custody.Candidate{Namespace: "notes", Class: custody.ClassFact, Body: "zephyr quokka marlin ledger for all",
				Channel: custody.ChannelUser, Audience: custody.AudienceTenant})
			e.ranked(alice, custody.SearchInput{Query: "zephyr", Mode: custody.ModeLexical})
			if _, err := e.svc.Retire(e.ctx, rev, shared.ID, "withdrawn", false); err != nil {
				t.Fatal(err)
			}
			soon := e.clock.Now().Add(time.Minute)
			e.remember(alice, custody.Candidate{Namespace: "notes", Class: custody.ClassFact, Body: "zephyr heron quokka", Channel: custody.ChannelUser, ExpiresAt: &soon})
			e.remember(alice, custody.Candidate{Namespace: "prefs", Key: "boat", Class: custody.ClassPreference, Body: "quokka zephyr marlin ledger ACCT-4242", Channel: custody.ChannelUser})
		}
		invisible()
		for i, b := range []string{"the zephyr quokka met at the harbour", "a quokka in the garden", "marlin fishing ledger for june",
			"payment to ACCT-4242 cleared", "heron seen while rowing", "the ledger is balanced", "quokka photos from the trip"} {
			e.fact(alice, "notes", b)
			if i == 3 {
				invisible()
			}
		}
		e.remember(alice, custody.Candidate{Namespace: "prefs", Key: "boat", Class: custody.ClassPreference, Body: "a rowing boat by the harbour", Channel: custody.ChannelUser})
		e.embedPending()
		return c
	}
	a, b := setup(clean, false), setup(noisy, true)
	for _, e := range []*env{clean, noisy} {
		e.clock.Advance(time.Hour) // the expired record is now out of reach
	}
	results := func(e *env, c *custody.Caller) map[string][]string {
		out := map[string][]string{}
		for _, q := range queries {
			for _, mode := range []custody.SearchMode{custody.ModeLexical, custody.ModeSemantic, custody.ModeHybrid} {
				res := e.ranked(c, custody.SearchInput{Query: q, Mode: mode, Limit: 20})
				var items []string
				for _, it := range res.Items {
					items = append(items, fmt.Sprintf("%s %x %v", it.Body, it.Score, it.Lists)) // %x: every bit
				}
				out[string(mode)+" "+q] = items
			}
		}
		return out
	}
	same := func(what string, want, got map[string][]string) {
		t.Helper()
		for k, w := range want {
			g := got[k]
			if fmt.Sprint(w) != fmt.Sprint(g) {
				t.Errorf("%s, %s:\n  without the records alice may not retrieve: %q\n  with them:                                 %q", what, k, w, g)
			}
		}
	}
	before := results(clean, a.alice)
	if len(before["lexical zephyr quokka"]) < 2 || len(before["semantic quokka"]) == 0 || len(before["hybrid marlin ledger"]) < 2 {
		t.Fatalf("alice's searches found too little to compare: %v", before)
	}
	same("alice's scores", before, results(noisy, b.alice))

	// The twin: records alice may retrieve count. Her own, and bob's shared
	// with the tenant, each holding the words, change her scores in both
	// stores alike.
	for _, e := range []*env{clean, noisy} {
		c := a
		if e == noisy {
			c = b
		}
		e.fact(c.alice, "notes", "zephyr and quokka again")
		e.remember(c.bob, custody.Candidate{Namespace: "notes", Class: custody.ClassFact, Body: "marlin ledger quokka for everyone", Channel: custody.ChannelUser, Audience: custody.AudienceTenant})
		e.embedPending()
	}
	after := results(clean, a.alice)
	for _, k := range []string{"lexical quokka", "lexical marlin ledger", "semantic quokka"} {
		if fmt.Sprint(after[k]) == fmt.Sprint(before[k]) {
			t.Errorf("%s: alice's own and her tenant's records holding the words left her scores as they were: %q", k, after[k])
		}
	}
	same("alice's scores after records she may retrieve", after, results(noisy, b.alice))
}
