package postgres_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/internal/lexical"
	"github.com/custody-mem/custody/postgres"
)

// copyStats is what st's copies have ranked so far.
func copyStats(st custody.Store) (records, byCopy, bySQL int64) {
	records, _, byCopy, bySQL = st.(*postgres.Store).SearchCopyStats()
	return records, byCopy, bySQL
}

// searchIDs is the ids svc's search for query finds for c, best first.
func searchIDs(t *testing.T, svc *custody.Service, c *custody.Caller, query string, limit int) []string {
	t.Helper()
	res, err := svc.Search(t.Context(), c, custody.SearchInput{Query: query, Limit: limit})
	if err != nil {
		t.Fatalf("search %q: %v", query, err)
	}
	ids := make([]string, len(res))
	for i, r := range res {
		ids[i] = r.ID
	}
	return ids
}

// A server ranks searches with its copy of the tenant's search terms and
// keeps it up with the log, which the other server writes too: a record
// written through one server is found through the other at once, ranked
// by the copy. The copy never decides who sees what: another user's
// own record, a quarantined one and a retired one are not found, a record
// shared with the tenant is. An erased record is never found again, and
// the copy keeps ranking without it: its terms are taken out, and a word
// of its own is nowhere in the copy. Throughout, a
// third server that ranks by ts_rank_cd alone (no copy) finds the same
// records when the limit takes every match.
func TestSearchCopyFollowsTheLog(t *testing.T) {
	ctx := t.Context()
	writer, reader, plain := copyServers(t)
	user := func(name, role string) *custody.Caller { return copyUser(t, writer, name, role) }
	alice, bob, reviewer := user("alice", "user"), user("bob", "user"), user("rita", "reviewer")
	remember := func(c *custody.Caller, body, audience string) *custody.Decision {
		t.Helper()
		d, err := writer.Remember(ctx, c, custody.Candidate{Namespace: "notes", Class: custody.ClassFact, Body: body, Channel: "user", Audience: audience})
		if err != nil {
			t.Fatalf("remember %q: %v", body, err)
		}
		return d
	}
	for i := range 40 {
		remember(alice, fmt.Sprintf("alpha note %d about the harbour and tide %d", i, i%7), "")
	}
	same := func(query string) []string {
		t.Helper()
		got := searchIDs(t, reader, alice, query, 100)
		want := searchIDs(t, plain, alice, query, 100)
		if !slices.Equal(sorted(got), sorted(want)) {
			t.Fatalf("search %q: the copy finds %v, ts_rank_cd %v", query, got, want)
		}
		return got
	}
	if got := same("alpha harbour"); len(got) != 40 {
		t.Fatalf("search alpha: %d records, want 40", len(got))
	}
	records, byCopy, bySQL := copyStats(reader.Store())
	if records != 40 || byCopy == 0 || bySQL != 0 {
		t.Fatalf("after the first search: the copy holds %d records, ranked %d, ts_rank_cd %d; want 40, ≥1, 0", records, byCopy, bySQL)
	}

	mine := remember(alice, "zebra crossing by the harbour", "")
	remember(bob, "zebra stripes of bob alone", custody.AudienceOwner)
	shared := remember(bob, "zebra herd bob shares with the tenant", custody.AudienceTenant)
	if _, err := writer.Approve(ctx, reviewer, shared.ID); err != nil { // a shared record waits for review
		t.Fatal(err)
	}
	if d, err := writer.Remember(ctx, alice, custody.Candidate{Namespace: "notes", Class: custody.ClassFact, Body: "zebra claims from a web page", Channel: "tool:browser"}); err != nil || d.State == custody.StateAdmitted {
		t.Fatalf("a write from a web page: %+v, %v; want it held", d, err)
	}
	retired := remember(alice, "zebra retired note", "")
	if _, err := writer.Forget(ctx, alice, retired.ID, "outdated", false); err != nil {
		t.Fatal(err)
	}
	got := same("zebra")
	if !slices.Equal(sorted(got), sorted([]string{mine.ID, shared.ID})) {
		t.Fatalf("search zebra through the other server: %v, want alice's %s and bob's shared %s", got, mine.ID, shared.ID)
	}
	if _, after, sql := copyStats(reader.Store()); after <= byCopy || sql != 0 {
		t.Fatalf("the search after other writes was ranked by ts_rank_cd (%d) or not by the copy (%d → %d)", sql, byCopy, after)
	}

	pg := reader.Store().(*postgres.Store)
	if n := pg.CopyMatches("acme", "crossing"); n != 1 {
		t.Fatalf("before the erasure the copy holds crossing in %d records, want 1", n)
	}
	_, byCopy, _ = copyStats(reader.Store())
	if _, err := writer.Forget(ctx, alice, mine.ID, "mistake", true); err != nil {
		t.Fatal(err)
	}
	if got := same("zebra crossing"); slices.Contains(got, mine.ID) {
		t.Fatalf("search after the erasure found the erased record: %v", got)
	}
	if got := same("zebra crossing"); !slices.Equal(got, []string{shared.ID}) {
		t.Fatalf("search zebra crossing after the erasure: %v, want only %s", got, shared.ID)
	}
	records, after, sql := copyStats(reader.Store())
	if records != 40+5-1 || after != byCopy+2 || sql != 0 {
		t.Fatalf("after the erasure the copy holds %d records and ranked %d searches (ts_rank_cd %d); want %d, %d, 0: the erased record taken out, the copy kept",
			records, after-byCopy, sql, 40+5-1, 2)
	}
	if n := pg.CopyMatches("acme", "crossing"); n != 0 {
		t.Fatalf("after the erasure the copy holds crossing, a word of the erased record alone, in %d records", n)
	}
}

// copyServers are three servers on a new database, whose copies are
// built inline: two that keep copies, and one that keeps none (every
// search ranked by ts_rank_cd).
func copyServers(t *testing.T) (writer, reader, plain *custody.Service) {
	postgres.TuneSearchCopies(t, 20000, 0)
	dsn := newDatabase(t)
	svcs := twoServers(t, dsn)
	plain = twoServers(t, dsn)[0]
	plain.Store().(*postgres.Store).SetSearchMemory(0)
	return svcs[0], svcs[1], plain
}

// copyUser adds a principal of tenant acme with role through svc, who
// may assert the channels user and tool:browser, and returns them as a
// caller.
func copyUser(t *testing.T, svc *custody.Service, name, role string) *custody.Caller {
	t.Helper()
	p, _, err := svc.AddPrincipal(t.Context(), custody.PrincipalInput{Tenant: "acme", Name: name, Roles: []string{role}, Channels: []string{"user", "tool:browser"}})
	if err != nil {
		t.Fatal(err)
	}
	return &custody.Caller{Principal: p, Subject: p}
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

// A tenant larger than a search waits for is copied on a goroutine of its
// own: the searches meanwhile are ranked by ts_rank_cd, the ones after by
// the copy, and both find the same records.
func TestSearchCopyBuiltAside(t *testing.T) {
	postgres.TuneSearchCopies(t, 5, time.Minute)
	release := postgres.HoldAsideBuilds(t) // the build waits until the first search is done
	ctx := t.Context()
	svc := twoServers(t, newDatabase(t))[0]
	st := svc.Store().(*postgres.Store)
	alice := userOf(t, svc)
	for i := range 20 {
		if _, err := svc.Remember(ctx, alice, custody.Candidate{Namespace: "n", Class: custody.ClassFact, Body: fmt.Sprintf("lantern %d", i), Channel: "user"}); err != nil {
			t.Fatal(err)
		}
	}
	first := searchIDs(t, svc, alice, "lantern", 50)
	if _, byCopy, bySQL := copyStats(st); byCopy != 0 || bySQL != 1 {
		t.Fatalf("the first search: ranked by the copy %d, by ts_rank_cd %d; want 0, 1", byCopy, bySQL)
	}
	release()
	st.WaitSearchBuilds()
	then := searchIDs(t, svc, alice, "lantern", 50)
	if records, byCopy, _ := copyStats(st); records != 20 || byCopy != 1 {
		t.Fatalf("after the build: the copy holds %d records and ranked %d searches; want 20, 1", records, byCopy)
	}
	if len(first) != 20 || !slices.Equal(sorted(first), sorted(then)) {
		t.Fatalf("ts_rank_cd found %v, the copy %v", first, then)
	}
}

// Past the memory bound the copies are dropped, and every search is ranked
// by ts_rank_cd, finding what it found before.
func TestSearchCopyMemoryBound(t *testing.T) {
	ctx := t.Context()
	svc := twoServers(t, newDatabase(t))[0]
	st := svc.Store().(*postgres.Store)
	st.SetSearchMemory(1 << 10)
	alice := userOf(t, svc)
	for i := range 30 {
		if _, err := svc.Remember(ctx, alice, custody.Candidate{Namespace: "n", Class: custody.ClassFact, Body: fmt.Sprintf("meadow lark song number %d", i), Channel: "user"}); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if got := searchIDs(t, svc, alice, "meadow", 50); len(got) != 30 {
			t.Fatalf("search past the bound: %d records, want 30", len(got))
		}
	}
	if records, byCopy, bySQL := copyStats(st); records != 0 || byCopy != 0 || bySQL != 2 {
		t.Fatalf("past the bound: the copy holds %d records, ranked %d, ts_rank_cd %d; want 0, 0, 2", records, byCopy, bySQL)
	}
}

// Few eligible records among a common word's many. In a namespace of
// three, a class of three, a key prefix of three or a metadata value of
// three (where half the others have another value of the same key), the
// copy ranks their matches alone and asks about those three. All find
// what ts_rank_cd finds.
func TestSearchCopyFewEligible(t *testing.T) {
	ctx := t.Context()
	dsn := newDatabase(t)
	svc := twoServers(t, dsn)[0]
	plain := twoServers(t, dsn)[0]
	plain.Store().(*postgres.Store).SetSearchMemory(0)
	alice := userOf(t, svc)
	var cands []custody.Candidate
	for i := range 400 {
		c := custody.Candidate{Namespace: "many", Class: custody.ClassFact, Body: fmt.Sprintf("river river river crossing %d", i), Channel: "user"}
		if i%2 == 0 {
			c.Metadata = custody.Metadata{"tag": "many"}
		}
		cands = append(cands, c)
	}
	for i := range 3 {
		cands = append(cands, custody.Candidate{Namespace: "few/notes", Class: custody.ClassEpisode, Key: fmt.Sprintf("few.river.%d", i),
			Body: fmt.Sprintf("a long note that mentions the river once among many other words %d", i), Channel: "user", Metadata: custody.Metadata{"tag": "few"}})
	}
	if _, err := svc.RememberBatch(ctx, alice, cands); err != nil {
		t.Fatal(err)
	}
	pg := svc.Store().(*postgres.Store)
	find := func(svc *custody.Service, in custody.SearchInput) []string {
		in.Query, in.Limit = "river", 10
		res, err := svc.Search(ctx, alice, in)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range res {
			ids = append(ids, r.ID)
		}
		return sorted(ids)
	}
	for _, c := range []struct {
		name     string
		in       custody.SearchInput
		min, max int64 // records asked about
	}{
		{"namespace few/notes", custody.SearchInput{Namespace: "few/notes"}, 3, 3},
		{"namespaces under few", custody.SearchInput{NamespacePrefix: "few"}, 3, 3},
		{"class episode", custody.SearchInput{Class: custody.ClassEpisode}, 3, 3},
		{"key_prefix few.", custody.SearchInput{Filters: custody.Filters{KeyPrefix: "few."}}, 3, 3},
		{"metadata tag=few", custody.SearchInput{Filters: custody.Filters{Metadata: custody.Metadata{"tag": "few"}}}, 3, 3},
	} {
		before := pg.CopyAsked()
		got, want := find(svc, c.in), find(plain, c.in)
		if len(got) != 3 || !slices.Equal(got, want) {
			t.Fatalf("search river, %s: the copy finds %v, ts_rank_cd %v; want the 3 of few", c.name, got, want)
		}
		if asked := pg.CopyAsked() - before; asked < c.min || asked > c.max {
			t.Errorf("search river, %s: the copy asked about %d records, want %d–%d", c.name, asked, c.min, c.max)
		}
	}
	if _, byCopy, bySQL := copyStats(svc.Store()); byCopy != 5 || bySQL != 0 {
		t.Fatalf("ranked by the copy %d, by ts_rank_cd %d; want 5, 0", byCopy, bySQL)
	}
}

// The words feedback may expand a search with are counted by the tenant's
// copy (TermMatches), as PostgreSQL counts them: among the records the
// caller may retrieve, never another user's own record, a held one or an
// erased one; a record written through another server counts at once, and
// another user's record shared with the tenant once it is approved.
func TestSearchCopyCountsTerms(t *testing.T) {
	ctx := t.Context()
	writer, reader, plain := copyServers(t)
	alice, bob, rita := copyUser(t, writer, "alice", "user"), copyUser(t, writer, "bob", "user"), copyUser(t, writer, "rita", "reviewer")
	remember := func(c *custody.Caller, body, audience, channel string) *custody.Decision {
		t.Helper()
		d, err := writer.Remember(ctx, c, custody.Candidate{Namespace: "notes", Class: custody.ClassFact, Body: body, Channel: channel, Audience: audience})
		if err != nil {
			t.Fatalf("remember %q: %v", body, err)
		}
		return d
	}
	for i := range 12 {
		remember(alice, fmt.Sprintf("harbour note %d", i), "", "user")
	}
	for i := range 5 {
		remember(bob, fmt.Sprintf("harbour lighthouse of bob %d", i), custody.AudienceOwner, "user")
	}
	remember(alice, "lighthouse claims from a web page", "", "tool:browser") // held for review
	erased := remember(alice, "lighthouse keeper's secret", "", "user")
	if _, err := writer.Forget(ctx, alice, erased.ID, "mistake", true); err != nil {
		t.Fatal(err)
	}
	pg, sql := reader.Store().(*postgres.Store), plain.Store().(*postgres.Store)
	sc := custody.Scope{Tenant: "acme", Subject: alice.Subject.Name, Now: time.Now().Add(time.Minute)}
	terms := []string{lexical.Document("harbour")[0], lexical.Document("lighthouse")[0], lexical.Document("keeper")[0], `a"b`, lexical.Document("absent")[0]}
	check := func(want []int, bound int) {
		t.Helper()
		byCopy, ok, err := pg.TermMatchesByCopy(ctx, sc, terms, bound)
		if err != nil || !ok {
			t.Fatalf("the copy did not count the terms: %v, %v", ok, err)
		}
		bySQL, err := sql.TermMatches(ctx, sc, terms, bound)
		if err != nil {
			t.Fatal(err)
		}
		got, err := pg.TermMatches(ctx, sc, terms, bound)
		if err != nil || !slices.Equal(byCopy, want) || !slices.Equal(bySQL, want) || !slices.Equal(got, want) {
			t.Fatalf("bound %d: the copy counts %v, PostgreSQL %v, TermMatches %v (%v); want %v", bound, byCopy, bySQL, got, err, want)
		}
	}
	if _, err := reader.Search(ctx, alice, custody.SearchInput{Query: "harbour"}); err != nil { // builds the copy
		t.Fatal(err)
	}
	check([]int{12, 0, 0, 0, 0}, 50)
	check([]int{5, 0, 0, 0, 0}, 5)
	remember(alice, "harbour lighthouse at dawn", "", "user")
	check([]int{13, 1, 0, 0, 0}, 50)
	shared := remember(bob, "lighthouse bob shares with the tenant", custody.AudienceTenant, "user") // another user's, shared once reviewed
	check([]int{13, 1, 0, 0, 0}, 50)
	if _, err := writer.Approve(ctx, rita, shared.ID); err != nil {
		t.Fatal(err)
	}
	check([]int{13, 2, 0, 0, 0}, 50)
}
