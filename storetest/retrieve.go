package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
)

func isNotFound(err error) bool { return errors.Is(err, custody.ErrNotFound) }

// Records in every ineligible state are invisible to get, list and search;
// an admitted control record next to them is visible to all three.
func testEligibility(t *testing.T, e *env) {
	alice := e.user("acme", "alice")
	harness := e.act(e.principal("acme", "harness", []string{"agent"}, []string{"agent", "tool:email"}, nil), "alice")
	deriver := e.act(e.principal("acme", "consolidator", []string{"agent"}, []string{"derive"}, nil), "alice")
	rev := e.act(e.principal("acme", "rev", []string{"reviewer"}, nil, nil), "")
	po := e.act(e.principal("acme", "po", []string{"policy_owner"}, nil, nil), "")
	const ns, q = "elig", "kiwi"
	write := func(c *custody.Caller, channel, key, body string, class custody.Class) *custody.Decision {
		return e.remember(c, custody.Candidate{Namespace: ns, Key: key, Class: class, Body: body, Channel: channel})
	}
	ctl := write(alice, "user", "", "kiwi control", custody.ClassFact)
	e.wantSeen(alice, ctl.ID, ns, q, true, "admitted control")

	quarantined := write(harness, "tool:email", "", "kiwi from an email", custody.ClassFact)
	wantState(t, "email fact", quarantined, custody.StateQuarantined, custody.AuthorityExternal)
	e.wantSeen(alice, quarantined.ID, ns, q, false, "quarantined")

	rejected := write(harness, "tool:email", "", "kiwi rejected", custody.ClassFact)
	if _, err := e.svc.Reject(e.ctx, rev, rejected.ID, "spam"); err != nil {
		t.Fatal(err)
	}
	e.wantSeen(alice, rejected.ID, ns, q, false, "rejected")

	retired := write(alice, "user", "", "kiwi retired", custody.ClassFact)
	e.wantSeen(alice, retired.ID, ns, q, true, "before retirement")
	if _, err := e.svc.Retire(e.ctx, rev, retired.ID, "obsolete", false); err != nil {
		t.Fatal(err)
	}
	e.wantSeen(alice, retired.ID, ns, q, false, "retired")

	payee := write(alice, "user", "payee", "kiwi payee one", custody.ClassFact)
	pendingConf := write(alice, "user", "payee", "kiwi payee two", custody.ClassFact)
	wantState(t, "payee overwrite", pendingConf, custody.StatePendingConfirmation, custody.AuthorityUser)
	e.wantSeen(alice, pendingConf.ID, ns, q, false, "pending confirmation")

	parent := write(alice, "user", "", "kiwi parent", custody.ClassFact)
	child := e.remember(deriver, custody.Candidate{Namespace: ns, Class: custody.ClassFact, Body: "kiwi child", Channel: "derive",
		DerivedFrom: []custody.Edge{{ID: parent.ID, Weight: 1}}})
	wantState(t, "derived child", child, custody.StateAdmitted, custody.AuthorityUser)
	e.wantSeen(alice, child.ID, ns, q, true, "child before its parent is quarantined")
	if _, err := e.svc.Quarantine(e.ctx, rev, parent.ID, "check"); err != nil {
		t.Fatal(err)
	}
	if r := e.record("acme", child.ID); r.State != custody.StateSuspended {
		t.Errorf("child state = %s, want suspended", r.State)
	}
	e.wantSeen(alice, child.ID, ns, q, false, "suspended")

	exp := e.clock.Now().Add(time.Hour)
	expiring := e.remember(alice, custody.Candidate{Namespace: ns, Class: custody.ClassFact, Body: "kiwi expiring", Channel: "user", ExpiresAt: &exp})
	e.wantSeen(alice, expiring.ID, ns, q, true, "before expiry")
	e.clock.Advance(time.Hour)
	e.wantSeen(alice, expiring.ID, ns, q, false, "at expiry")

	if _, _, err := e.svc.SetPolicy(e.ctx, po, []byte(`permit (principal, action, resource) when { context.missing == 1 };`)); err != nil {
		t.Fatal(err)
	}
	pending := write(alice, "user", "", "kiwi pending", custody.ClassFact)
	wantState(t, "under a failing policy", pending, custody.StatePending, custody.AuthorityUser)
	e.wantSeen(alice, pending.ID, ns, q, false, "pending")

	// The control record stayed visible throughout, and is all that is seen.
	e.wantSeen(alice, ctl.ID, ns, q, true, "admitted control at the end")
	want := []string{ctl.ID, payee.ID}
	if got := e.listIDs(alice, custody.ListInput{Namespace: ns}); !sameSet(got, want) {
		t.Errorf("list at the end = %v, want the control and the payee in force %v", got, want)
	}
	if got := e.searchIDs(alice, custody.SearchInput{Query: q}); !sameSet(got, want) {
		t.Errorf("search at the end = %v, want %v", got, want)
	}
	e.verify()
}

// Only the newest admitted version of a key is retrieved; a newer version
// that is not admitted does not hide it.
func testSuperseded(t *testing.T, e *env) {
	alice := e.user("acme", "alice")
	harness := e.act(e.principal("acme", "harness", []string{"agent"}, []string{"tool:email"}, nil), "alice")
	rev := e.act(e.principal("acme", "rev", []string{"reviewer"}, nil, nil), "")
	write := func(c *custody.Caller, channel, body string) *custody.Decision {
		return e.remember(c, custody.Candidate{Namespace: "prefs", Key: "colour", Class: custody.ClassPreference, Body: body, Channel: channel})
	}
	v1 := write(alice, "user", "colour blue")
	v2 := write(alice, "user", "colour green")
	e.wantSeen(alice, v2.ID, "prefs", "colour", true, "newest version")
	e.wantSeen(alice, v1.ID, "prefs", "colour", false, "superseded version")
	if got := e.listIDs(alice, custody.ListInput{Namespace: "prefs", Key: "colour"}); !slices.Equal(got, []string{v2.ID}) {
		t.Errorf("list by key = %v, want [%s]", got, v2.ID)
	}
	v3 := write(harness, "tool:email", "colour purple")
	wantState(t, "email overwrite", v3, custody.StateQuarantined, custody.AuthorityExternal)
	if v3.Record.Version != 3 {
		t.Errorf("quarantined version = %d, want 3", v3.Record.Version)
	}
	e.wantSeen(alice, v2.ID, "prefs", "colour", true, "newest admitted version under a quarantined newer one")
	e.view(func(tx custody.Tx) error {
		cur, err := tx.Current(e.ctx, "acme", "alice", "prefs", "colour")
		if err != nil || cur == nil || cur.ID != v2.ID {
			t.Errorf("current = %v, %v; want %s", cur, err, v2.ID)
		}
		if n, err := tx.MaxVersion(e.ctx, "acme", "alice", "prefs", "colour"); n != 3 || err != nil {
			t.Errorf("max version = %d, %v; want 3", n, err)
		}
		if id, err := tx.CurrentID(e.ctx, "acme", "alice", "prefs", "colour"); id != v2.ID || err != nil {
			t.Errorf("current id = %q, %v; want %s", id, err, v2.ID)
		}
		if cur, err := tx.Current(e.ctx, "acme", "alice", "prefs", "size"); cur != nil || err != nil {
			t.Errorf("current of an unknown key = %v, %v; want nil, nil", cur, err)
		}
		if id, err := tx.CurrentID(e.ctx, "acme", "alice", "prefs", "size"); id != "" || err != nil {
			t.Errorf("current id of an unknown key = %q, %v; want none", id, err)
		}
		if id, n, err := tx.KeyVersions(e.ctx, "acme", "alice", "prefs", "colour"); id != v2.ID || n != 3 || err != nil {
			t.Errorf("key versions = %q, %d, %v; want %s, 3", id, n, err, v2.ID)
		}
		if id, n, err := tx.KeyVersions(e.ctx, "acme", "alice", "prefs", "size"); id != "" || n != 0 || err != nil {
			t.Errorf("key versions of an unknown key = %q, %d, %v; want none, 0", id, n, err)
		}
		if n, err := tx.MaxVersion(e.ctx, "acme", "alice", "prefs", "size"); n != 0 || err != nil {
			t.Errorf("max version of an unknown key = %d, %v; want 0", n, err)
		}
		return nil
	})
	// Retiring the value in force brings the previous admitted one back.
	if _, err := e.svc.Retire(e.ctx, rev, v2.ID, "wrong", false); err != nil {
		t.Fatal(err)
	}
	e.wantSeen(alice, v2.ID, "prefs", "colour", false, "retired newest version")
	e.wantSeen(alice, v1.ID, "prefs", "colour", true, "previous version after the newest was retired")
}

// Owner, group and tenant audiences.
func testAudience(t *testing.T, e *env) {
	alice := e.user("acme", "alice", "fin")
	bob := e.user("acme", "bob", "fin")
	carol := e.user("acme", "carol", "ops")
	agent := e.principal("acme", "harness", []string{"agent"}, nil, nil)
	write := func(aud string) string {
		d := e.remember(alice, custody.Candidate{Namespace: "aud", Class: custody.ClassFact, Body: "lantern " + aud, Channel: "user", Audience: aud})
		wantState(t, aud, d, custody.StateAdmitted, custody.AuthorityUser)
		if d.Record.Audience != aud {
			t.Errorf("audience = %q, want %q", d.Record.Audience, aud)
		}
		return d.ID
	}
	own, grp, ten := write("owner"), write("group:fin"), write("tenant")
	for _, tc := range []struct {
		who  string
		c    *custody.Caller
		want []string
	}{
		{"alice (owner)", alice, []string{own, grp, ten}},
		{"bob (in fin)", bob, []string{grp, ten}},
		{"agent for bob", e.act(agent, "bob"), []string{grp, ten}},
		{"carol (not in fin)", carol, []string{ten}},
	} {
		for _, id := range []string{own, grp, ten} {
			e.wantSeen(tc.c, id, "aud", "lantern", slices.Contains(tc.want, id), tc.who)
		}
	}
}

// Two tenants whose names share a prefix, with users of the same name, see
// nothing of each other.
func testTenantIsolation(t *testing.T, e *env) {
	type side struct {
		tenant  string
		alice   *custody.Caller
		harness *custody.Caller
		rev     *custody.Caller
		ids     []string
		email   string
	}
	sides := []*side{{tenant: "acme"}, {tenant: "acme-corp"}}
	for _, s := range sides {
		s.alice = e.user(s.tenant, "alice", "fin")
		s.harness = e.act(e.principal(s.tenant, "harness", []string{"agent"}, []string{"tool:email"}, nil), "alice")
		s.rev = e.act(e.principal(s.tenant, "rev", []string{"reviewer"}, nil, nil), "")
		for _, aud := range []string{"owner", "group:fin", "tenant"} {
			d := e.remember(s.alice, custody.Candidate{Namespace: "plans", Class: custody.ClassFact, Key: "orchard",
				Body: "orchard plan IBAN DE89 3704 0044 " + aud, Channel: "user", Audience: aud})
			s.ids = append(s.ids, d.ID)
		}
		s.email = e.remember(s.harness, custody.Candidate{Namespace: "plans", Class: custody.ClassFact, Body: "orchard email " + s.tenant, Channel: "tool:email"}).ID
	}
	for i, s := range sides {
		o := sides[1-i]
		if got := e.listIDs(s.alice, custody.ListInput{Namespace: "plans"}); !sameSet(got, s.ids[2:]) {
			// The key "orchard" has three versions; only the newest is listed.
			t.Errorf("%s list = %v, want %v", s.tenant, got, s.ids[2:])
		}
		for _, id := range o.ids {
			if e.visible(s.alice, id) {
				t.Errorf("%s/alice gets %s/%s", s.tenant, o.tenant, id)
			}
		}
		if !e.visible(s.alice, s.ids[2]) {
			t.Errorf("%s/alice does not get her own record", s.tenant)
		}
		got := e.searchIDs(s.alice, custody.SearchInput{Query: "orchard plan", Limit: 100})
		if !slices.Equal(got, s.ids[2:]) {
			t.Errorf("%s search = %v, want %v", s.tenant, got, s.ids[2:])
		}
		e.view(func(tx custody.Tx) error {
			if _, err := tx.Record(e.ctx, s.tenant, o.ids[0]); !isNotFound(err) {
				t.Errorf("%s reads %s's record: err = %v", s.tenant, o.tenant, err)
			}
			if r, err := tx.Record(e.ctx, s.tenant, s.ids[0]); err != nil || r.Tenant != s.tenant {
				t.Errorf("%s reads its own record: %v, %v", s.tenant, r, err)
			}
			recs, err := tx.Mentioning(e.ctx, custody.Scope{Tenant: s.tenant, Subject: "alice", Groups: []string{"fin"}}, custody.MentionQuery{Text: "de8937040044"})
			if err != nil {
				return err
			}
			for _, r := range recs {
				if r.Tenant != s.tenant {
					t.Errorf("%s mentioning returned a record of %s", s.tenant, r.Tenant)
				}
			}
			if len(recs) != 3 {
				t.Errorf("%s mentioning found %d records, want 3", s.tenant, len(recs))
			}
			if ok, err := tx.Tombstoned(e.ctx, s.tenant, o.ids[0]); ok || err != nil {
				t.Errorf("tombstoned across tenants: %v, %v", ok, err)
			}
			return nil
		})
		items, _, err := e.svc.ReviewQueue(e.ctx, s.rev, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(items) != 1 || items[0].ID != s.email {
			t.Errorf("%s review queue = %d items, want only %s", s.tenant, len(items), s.email)
		}
		if _, err := e.svc.Approve(e.ctx, s.rev, o.email); !isNotFound(err) {
			t.Errorf("%s approves %s's candidate: err = %v, want not found", s.tenant, o.tenant, err)
		}
		size, err := e.store.LogSize(e.ctx, s.tenant)
		if err != nil {
			t.Fatal(err)
		}
		views, err := e.svc.LogEntries(e.ctx, s.alice, 0, size)
		if err != nil {
			t.Fatal(err)
		}
		own := 0
		for _, v := range views {
			if v.Entry != nil {
				own++
				if v.Entry.Tenant != s.tenant {
					t.Errorf("%s sees log entry %d of %s", s.tenant, v.Index, v.Entry.Tenant)
				}
			}
		}
		if own == 0 {
			t.Errorf("%s sees none of its own log entries", s.tenant)
		}
	}
}

// Pages of a listing hold every eligible record exactly once, newest first,
// however ineligible records are interleaved.
func testPagination(t *testing.T, e *env) {
	alice := e.user("acme", "alice")
	bob := e.user("acme", "bob")
	harness := e.act(e.principal("acme", "harness", []string{"agent"}, []string{"tool:email"}, nil), "alice")
	var want []string
	for i := range 25 {
		want = append(want, e.fact(alice, "page", fmt.Sprintf("page item %d", i)).ID)
		if i%3 == 0 {
			e.remember(harness, custody.Candidate{Namespace: "page", Class: custody.ClassFact, Body: "noise", Channel: "tool:email"})
			e.fact(bob, "page", "bob's own")
			e.fact(alice, "other", "another namespace")
		}
	}
	slices.Reverse(want)
	var got []string
	var sizes []int
	cursor := ""
	for range 10 {
		p, err := e.svc.List(e.ctx, alice, custody.ListInput{Namespace: "page", Limit: 10, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(p.Items))
		for _, r := range p.Items {
			got = append(got, r.ID)
		}
		if cursor = p.NextCursor; cursor == "" {
			break
		}
	}
	if !slices.Equal(sizes, []int{10, 10, 5}) {
		t.Errorf("page sizes = %v, want [10 10 5]", sizes)
	}
	if !slices.Equal(got, want) {
		t.Errorf("pages = %v\nwant    %v", got, want)
	}
	// Exactly one full page ends with an empty cursor.
	p, err := e.svc.List(e.ctx, alice, custody.ListInput{Namespace: "page", Limit: 25})
	if err != nil || len(p.Items) != 25 || p.NextCursor != "" {
		t.Errorf("limit 25: %d items, cursor %q, err %v; want 25, \"\"", len(p.Items), p.NextCursor, err)
	}
	if _, err := e.svc.List(e.ctx, alice, custody.ListInput{Cursor: "not-a-cursor"}); !errors.Is(err, custody.ErrInvalid) {
		t.Errorf("bad cursor: err = %v, want invalid", err)
	}
	// The store's own cursor: ids strictly below After.
	recs, err := e.store.List(e.ctx, custody.Scope{Tenant: "acme", Subject: "alice", Now: e.clock.Now()},
		custody.ListFilter{Namespace: "page", After: want[4], Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if ids := recordIDs(recs); !slices.Equal(ids, want[5:8]) {
		t.Errorf("store list after %s = %v, want %v", want[4], ids, want[5:8])
	}
	recs, err = e.store.List(e.ctx, custody.Scope{Tenant: "acme", Subject: "alice", Now: e.clock.Now()},
		custody.ListFilter{Class: custody.ClassEpisode, Limit: 100})
	if err != nil || len(recs) != 0 {
		t.Errorf("class filter: %d records, %v; want none", len(recs), err)
	}
}

// A record holding both query words ranks above records holding one; hits
// are ordered by score.
func testSearchRanking(t *testing.T, e *env) {
	alice := e.user("acme", "alice")
	one := e.fact(alice, "s", "alpha delta epsilon zeta").ID
	both := e.fact(alice, "s", "alpha beta gamma delta").ID
	other := e.fact(alice, "s", "beta eta theta iota").ID
	e.fact(alice, "s", "nothing relevant here")
	hits, err := e.svc.Search(e.ctx, alice, custody.SearchInput{Query: "alpha beta"})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 3 || hits[0].ID != both {
		t.Fatalf("search alpha beta = %v, want %s first of 3", scoredIDs(hits), both)
	}
	if !sameSet(scoredIDs(hits[1:]), []string{one, other}) {
		t.Errorf("the rest = %v, want %s and %s", scoredIDs(hits[1:]), one, other)
	}
	if !(hits[0].Score > hits[1].Score) || hits[1].Score < hits[2].Score {
		t.Errorf("scores not descending with the best strictly first: %v, %v, %v", hits[0].Score, hits[1].Score, hits[2].Score)
	}
	for _, h := range hits {
		if h.Channel != "user" || h.Authority != custody.AuthorityUser || h.Writer != "acme/alice" || h.Receipt == nil {
			t.Errorf("hit %s lacks provenance: %+v", h.ID, h.Record)
		}
	}
	// The key is searched too, and words match case-insensitively.
	k := e.remember(alice, custody.Candidate{Namespace: "s", Key: "favourite_Mountain", Class: custody.ClassPreference, Body: "K2", Channel: "user"}).ID
	if got := e.searchIDs(alice, custody.SearchInput{Query: "MOUNTAIN"}); !slices.Equal(got, []string{k}) {
		t.Errorf("search by key word = %v, want [%s]", got, k)
	}
	// Filters: namespace and class.
	e.remember(alice, custody.Candidate{Namespace: "t", Class: custody.ClassEpisode, Body: "alpha in another namespace", Channel: "user"})
	if got := e.searchIDs(alice, custody.SearchInput{Query: "alpha", Namespace: "s"}); !sameSet(got, []string{one, both}) {
		t.Errorf("namespace filter = %v", got)
	}
	if got := e.searchIDs(alice, custody.SearchInput{Query: "alpha", Class: custody.ClassEpisode}); len(got) != 1 {
		t.Errorf("class filter = %v, want the one episode", got)
	}
	if got := e.searchIDs(alice, custody.SearchInput{Query: "alpha beta", Limit: 1}); !slices.Equal(got, []string{both}) {
		t.Errorf("limit 1 = %v, want [%s]", got, both)
	}
}

// Search takes plain text: quotes, stars, NEAR, minus, colons and brackets
// are text, never query syntax, and never an error.
func testSearchPlainText(t *testing.T, e *env) {
	alice := e.user("acme", "alice")
	hello := e.fact(alice, "s", `say "hello" to NEAR(the) world - body: (yes) & no | maybe`).ID
	alphabet := e.fact(alice, "s", "alphabet soup").ID
	for _, q := range []string{
		`"hello`, `hello"`, `"hello world"`, `hello*`, `NEAR(hello world)`, `NEAR`, `near/2`, `-hello`, `hello -world`,
		`body:hello`, `{body}: hello`, `(hello`, `hello)`, `hello AND`, `OR hello`, `NOT hello`, `hello & world`, `!hello`,
		`hello | x`, `hello:*`, `'hello'`, `hello\`, `hello^2`, `hello~`, `hello <-> world`, `world:A`,
	} {
		hits, err := e.svc.Search(e.ctx, alice, custody.SearchInput{Query: q})
		if err != nil {
			t.Errorf("search %q: %v", q, err)
			continue
		}
		if ids := scoredIDs(hits); !slices.Contains(ids, hello) || slices.Contains(ids, alphabet) {
			t.Errorf("search %q = %v, want the hello record (%s) only", q, ids, hello)
		}
	}
	for _, q := range []string{`*`, `"`, `(`, `-`, `:`, `""`, `()`, `^`, `'`, `\`, `&|!`, `<->`, `NOT`, `AND OR`} {
		hits, err := e.svc.Search(e.ctx, alice, custody.SearchInput{Query: q})
		if err != nil {
			t.Errorf("search %q: %v", q, err)
		} else if len(hits) != 0 {
			t.Errorf("search %q = %v, want nothing", q, scoredIDs(hits))
		}
	}
	// A star is not a prefix operator: alph* is the word alph.
	if got := e.searchIDs(alice, custody.SearchInput{Query: "alph*"}); len(got) != 0 {
		t.Errorf("search alph* = %v, want nothing", got)
	}
	if got := e.searchIDs(alice, custody.SearchInput{Query: "alphabet"}); !slices.Equal(got, []string{alphabet}) {
		t.Errorf("search alphabet = %v, want [%s]", got, alphabet)
	}
	// Store level: text without words finds nothing and is no error.
	hits, err := e.store.Search(e.ctx, custody.Scope{Tenant: "acme", Subject: "alice", Now: e.clock.Now()}, custody.SearchQuery{Text: `"*(:-`, Limit: 10})
	if err != nil || len(hits) != 0 {
		t.Errorf("store search without words = %v, %v", scoredIDs(hits), err)
	}
}

// Eligibility is decided inside the query: many better-ranked ineligible
// records do not push the one eligible record out of a small limit.
func testSearchFiltersBeforeLimit(t *testing.T, e *env) {
	alice := e.user("acme", "alice")
	bob := e.user("acme", "bob")
	harness := e.act(e.principal("acme", "harness", []string{"agent"}, []string{"tool:email"}, nil), "alice")
	for range 15 {
		e.remember(harness, custody.Candidate{Namespace: "s", Class: custody.ClassFact, Body: "needle needle needle", Channel: "tool:email"})
		e.fact(bob, "s", "needle needle needle")
	}
	exp := e.clock.Now().Add(time.Minute)
	for range 5 {
		e.remember(alice, custody.Candidate{Namespace: "s", Class: custody.ClassFact, Body: "needle needle", Channel: "user", ExpiresAt: &exp})
	}
	e.clock.Advance(time.Minute)
	want := e.fact(alice, "s", "one needle in a haystack").ID
	if got := e.searchIDs(alice, custody.SearchInput{Query: "needle", Limit: 5}); !slices.Equal(got, []string{want}) {
		t.Errorf("search = %v, want [%s]", got, want)
	}
	if got := e.searchIDs(bob, custody.SearchInput{Query: "needle", Limit: 5}); len(got) != 5 {
		t.Errorf("bob's search = %d hits, want 5 of his own", len(got))
	}
}

func recordIDs(rs []*custody.Record) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

func scoredIDs(hs []custody.Scored) []string {
	out := []string{}
	for _, h := range hs {
		out = append(out, h.ID)
	}
	return out
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	sort.Strings(a)
	sort.Strings(b)
	return slices.Equal(a, b)
}
