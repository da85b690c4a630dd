package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
)

// Stored checkpoints, per tenant: the largest is the latest; a size stored
// twice keeps its first note; another tenant's are not seen.
func testCheckpoints(t *testing.T, e *env) {
	if _, _, err := e.store.LatestCheckpoint(e.ctx, "acme"); !isNotFound(err) {
		t.Errorf("latest of none: err = %v, want not found", err)
	}
	for _, c := range []struct {
		tenant string
		size   uint64
		note   string
	}{{"acme", 3, "three"}, {"acme", 5, "five"}, {"acme", 5, "five again"}, {"acme", 4, "four"}, {"beta", 9, "beta nine"}} {
		if err := e.store.SaveCheckpoint(e.ctx, c.tenant, c.size, []byte(c.note)); err != nil {
			t.Fatalf("save %d: %v", c.size, err)
		}
	}
	size, note, err := e.store.LatestCheckpoint(e.ctx, "acme")
	if err != nil || size != 5 || string(note) != "five" {
		t.Errorf("latest = %d %q %v, want 5 \"five\"", size, note, err)
	}
	size, note, err = e.store.LatestCheckpoint(e.ctx, "beta")
	if err != nil || size != 9 || string(note) != "beta nine" {
		t.Errorf("latest of beta = %d %q %v, want 9 \"beta nine\"", size, note, err)
	}
	if _, _, err := e.store.LatestCheckpoint(e.ctx, "gamma"); !isNotFound(err) {
		t.Errorf("latest of a tenant with none: err = %v, want not found", err)
	}
}

// Tombstones are per tenant and survive a second registration.
func testTombstones(t *testing.T, e *env) {
	const id = "01JDTB0000000000000000000A"
	check := func(tenant string, want bool) {
		t.Helper()
		e.view(func(tx custody.Tx) error {
			if got, err := tx.Tombstoned(e.ctx, tenant, id); got != want || err != nil {
				t.Errorf("tombstoned in %s = %v, %v; want %v", tenant, got, err, want)
			}
			return nil
		})
	}
	check("acme", false)
	for _, st := range []custody.State{custody.StateRejected, custody.StateRetired} {
		if err := e.store.Update(e.ctx, func(tx custody.Tx) error { return tx.Tombstone(e.ctx, "acme", id, st) }); err != nil {
			t.Fatal(err)
		}
	}
	check("acme", true)
	check("acme-corp", false)
	// Through the domain: retiring registers the id.
	alice := e.user("acme", "alice")
	rev := e.act(e.principal("acme", "rev", []string{"reviewer"}, nil, nil), "")
	d := e.fact(alice, "n", "to be retired")
	kept := e.fact(alice, "n", "kept")
	if _, err := e.svc.Retire(e.ctx, rev, d.ID, "", false); err != nil {
		t.Fatal(err)
	}
	e.view(func(tx custody.Tx) error {
		if ok, err := tx.Tombstoned(e.ctx, "acme", d.ID); !ok || err != nil {
			t.Errorf("retired id tombstoned = %v, %v", ok, err)
		}
		if ok, err := tx.Tombstoned(e.ctx, "acme", kept.ID); ok || err != nil {
			t.Errorf("admitted id tombstoned = %v, %v", ok, err)
		}
		return nil
	})
}

// A grant is used once, and only by its tenant, subject and digest.
func testGrants(t *testing.T, e *env) {
	grant := func(id, tenant, subject, digest string) {
		t.Helper()
		g := &custody.Grant{ID: id, Tenant: tenant, Subject: subject, Digest: digest, Actor: tenant + "/" + subject, CreatedAt: Start}
		if err := e.store.Update(e.ctx, func(tx custody.Tx) error { return tx.InsertGrant(e.ctx, g) }); err != nil {
			t.Fatal(err)
		}
	}
	use := func(tenant, subject, digest string) bool {
		t.Helper()
		var ok bool
		err := e.store.Update(e.ctx, func(tx custody.Tx) error {
			var err error
			ok, err = tx.UseGrant(e.ctx, tenant, subject, digest, Start.Add(time.Second))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	grant("01JDGR0000000000000000000A", "acme", "alice", "d1")
	grant("01JDGR0000000000000000000B", "acme", "alice", "d1")
	for _, tc := range []struct {
		tenant, subject, digest string
		want                    bool
	}{
		{"acme", "bob", "d1", false},
		{"acme-corp", "alice", "d1", false},
		{"acme", "alice", "d2", false},
		{"acme", "alice", "d1", true},
		{"acme", "alice", "d1", true},
		{"acme", "alice", "d1", false},
	} {
		if got := use(tc.tenant, tc.subject, tc.digest); got != tc.want {
			t.Errorf("use %s/%s %s = %v, want %v", tc.tenant, tc.subject, tc.digest, got, tc.want)
		}
	}
	// ScanGrants gives every row as stored, the used mark with its time.
	grant("01JDGR0000000000000000000C", "acme", "bob", "d3")
	var got []string
	err := e.store.View(e.ctx, func(tx custody.Tx) error {
		return tx.ScanGrants(e.ctx, func(g *custody.StoredGrant) error {
			used := "unused"
			if g.UsedAt != nil {
				used = "used " + g.UsedAt.Sub(Start).String()
			}
			got = append(got, fmt.Sprintf("%s %s/%s %s by %s at %s, %s", g.ID[len(g.ID)-1:], g.Tenant, g.Subject, g.Digest, g.Actor, g.CreatedAt.Sub(Start), used))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"A acme/alice d1 by acme/alice at 0s, used 1s", "B acme/alice d1 by acme/alice at 0s, used 1s", "C acme/bob d3 by acme/bob at 0s, unused"}
	if !slices.Equal(got, want) {
		t.Errorf("ScanGrants = %q, want %q", got, want)
	}
}

// Every field of a record survives the store exactly (times to the
// nanosecond); parents are never nil.
func testRecordRoundTrip(t *testing.T, e *env) {
	exp := Start.Add(time.Hour + time.Nanosecond)
	full := &custody.Record{
		ID: "01JDRT0000000000000000000A", Tenant: "rt", Owner: "alice", Namespace: "a/b.c", Key: "k:1-x_y.z",
		Class: custody.ClassPreference, Body: "ünïcödé \"quotes\" 'single' \\ backslash % _ \t\n emoji 🦉",
		Channel: "tool:email", Writer: "rt/harness", SourceRef: "mail:<id@example>", Authority: custody.AuthorityAgent,
		Audience: "group:fin", State: custody.StateQuarantined, CreatedAt: Start, ExpiresAt: &exp, Version: 7,
		LogIndex: 1<<40 + 3, PolicyVersion: "pv", Session: "01JDSE0000000000000000000A",
		Parents: []custody.Edge{{ID: "01JDPA0000000000000000000A", Weight: 0.1}, {ID: "01JDPA0000000000000000000B", Weight: 1.0 / 3}},
		Receipt: &custody.Receipt{Decision: custody.StateQuarantined, PolicyVersion: "pv", Rules: []string{"a", "b"},
			Reason: "reason with a NUL \x00 and <html>", Inputs: map[string]string{"k": "v"}, Error: "e", Actor: "rt/harness",
			Time: Start.Add(time.Nanosecond), LogIndex: 99},
	}
	// A receipt that repeats its record, as an admission's does, and one
	// that differs from it only in its time's zone.
	echo := &custody.Record{ID: "01JDRT0000000000000000000D", Tenant: "rt", Owner: "alice", Namespace: "n", Key: "k",
		Class: custody.ClassFact, Body: "e", Channel: "user", Writer: "rt/alice", Authority: custody.AuthorityUser, Audience: "owner",
		State: custody.StateAdmitted, CreatedAt: Start, Version: 1, LogIndex: 12, PolicyVersion: "pv", Parents: []custody.Edge{},
		Receipt: &custody.Receipt{Decision: custody.StateAdmitted, PolicyVersion: "pv", Rules: []string{"user-channel"}, Reason: "r",
			Inputs: map[string]string{"principal": "rt/alice", "channel": "user", "class": "fact", "key": "k", "authority": "user",
				"audience": "owner", "has_session": "false", "derived": "false", "roles": "user"},
			Actor: "rt/alice", Time: Start, LogIndex: 12}}
	zoned := *echo
	zoned.ID, zoned.Key = "01JDRT0000000000000000000E", "k2"
	zoned.Receipt = &custody.Receipt{Decision: custody.StateAdmitted, Actor: "rt/alice", Time: Start.In(time.FixedZone("CET", 3600)), LogIndex: 12}
	bare := &custody.Record{ID: "01JDRT0000000000000000000B", Tenant: "rt", Owner: "bob", Namespace: "n", Class: custody.ClassEpisode,
		Body: "b", Channel: "user", Writer: "rt/bob", Authority: custody.AuthorityUser, Audience: "owner",
		State: custody.StateAdmitted, CreatedAt: time.Unix(0, 1).UTC(), Version: 1}
	if err := e.store.Update(e.ctx, func(tx custody.Tx) error {
		for _, r := range []*custody.Record{full, echo, &zoned} {
			if err := tx.InsertRecord(e.ctx, r); err != nil {
				return err
			}
		}
		return tx.InsertRecord(e.ctx, bare)
	}); err != nil {
		t.Fatal(err)
	}
	bare.Parents = []custody.Edge{}
	for _, want := range []*custody.Record{full, echo, &zoned, bare} {
		got := e.record("rt", want.ID)
		if got.Parents == nil {
			t.Errorf("%s: parents read back as nil", want.ID)
		}
		if g, w := mustJSON(t, got), mustJSON(t, want); g != w || got.Tenant != want.Tenant {
			t.Errorf("round trip of %s:\n got %s\nwant %s", want.ID, g, w)
		}
	}
	// An update changes what the domain changes, and only that record.
	full.State, full.Authority, full.LogIndex, full.Audience = custody.StateAdmitted, custody.AuthorityConfirmed, 5, "tenant"
	full.Parents = full.Parents[1:]
	full.Receipt.Reason = "approved"
	if err := e.store.Update(e.ctx, func(tx custody.Tx) error { return tx.UpdateRecord(e.ctx, full) }); err != nil {
		t.Fatal(err)
	}
	if g, w := mustJSON(t, e.record("rt", full.ID)), mustJSON(t, full); g != w {
		t.Errorf("after update:\n got %s\nwant %s", g, w)
	}
	if g, w := mustJSON(t, e.record("rt", bare.ID)), mustJSON(t, bare); g != w {
		t.Errorf("the other record changed:\n got %s\nwant %s", g, w)
	}
	e.view(func(tx custody.Tx) error {
		kids, err := tx.Children(e.ctx, "rt", "01JDPA0000000000000000000A")
		if err != nil || len(kids) != 0 {
			t.Errorf("children of a dropped parent = %v, %v", kids, err)
		}
		kids, err = tx.Children(e.ctx, "rt", "01JDPA0000000000000000000B")
		if err != nil || !slices.Equal(kids, []string{full.ID}) {
			t.Errorf("children of a kept parent = %v, %v", kids, err)
		}
		return nil
	})
	// Text a backend cannot hold is refused as invalid input, never half
	// written; text it can hold comes back as it went in.
	nul := &custody.Record{ID: "01JDRT0000000000000000000C", Tenant: "rt", Owner: "bob", Namespace: "n", Class: custody.ClassEpisode,
		Body: "nul \x00 byte", Channel: "user", Writer: "rt/bob", Authority: custody.AuthorityUser, Audience: "owner",
		State: custody.StateAdmitted, CreatedAt: Start, Version: 1, Parents: []custody.Edge{}}
	err := e.store.Update(e.ctx, func(tx custody.Tx) error { return tx.InsertRecord(e.ctx, nul) })
	switch {
	case err == nil:
		if got := e.record("rt", nul.ID); got.Body != nul.Body {
			t.Errorf("NUL body read back as %q", got.Body)
		}
	case errors.Is(err, custody.ErrInvalid):
		e.view(func(tx custody.Tx) error {
			if _, err := tx.Record(e.ctx, "rt", nul.ID); !isNotFound(err) {
				t.Errorf("a refused record was stored: %v", err)
			}
			return nil
		})
	default:
		t.Errorf("NUL body: err = %v, want nil or invalid input", err)
	}
}

func mustJSON(t *testing.T, r *custody.Record) string {
	t.Helper()
	return asJSON(t, r)
}

func receiptJSON(t *testing.T, rc *custody.Receipt) string {
	t.Helper()
	return asJSON(t, rc)
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Erasing a retired record removes its body from search and the gate's
// lookups; the log keeps the hash, so verify still passes.
func testErase(t *testing.T, e *env) {
	alice := e.user("acme", "alice")
	rev := e.act(e.principal("acme", "rev", []string{"reviewer"}, nil, nil), "")
	gone := e.fact(alice, "n", "secret zanzibar code DE12 3456 7890").ID
	kept := e.fact(alice, "n", "public zanzibar note DE12 3456 7890").ID
	mention := func() []string {
		var ids []string
		e.view(func(tx custody.Tx) error {
			recs, err := tx.Mentioning(e.ctx, custody.Scope{Tenant: "acme", Subject: "alice"}, custody.MentionQuery{Text: "de1234567890"})
			ids = recordIDs(recs)
			return err
		})
		return ids
	}
	if got := mention(); !sameSet(got, []string{gone, kept}) {
		t.Errorf("mentioning before = %v", got)
	}
	if _, err := e.svc.Retire(e.ctx, rev, gone, "", true); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Retire(e.ctx, rev, kept, "", false); err != nil {
		t.Fatal(err)
	}
	r := e.record("acme", gone)
	if !r.Erased || r.Body != "" || r.State != custody.StateRetired {
		t.Errorf("erased record = %+v", r)
	}
	if got := mention(); !slices.Equal(got, []string{kept}) {
		t.Errorf("mentioning after erasure = %v, want the retired but kept record only [%s]", got, kept)
	}
	e.verify()
}

// Lookups by values no record can hold (a NUL byte, invalid UTF-8) find
// nothing and are no error, so a hostile id or argument cannot turn a
// denial or a 404 into a failed transaction.
func testUnstorableLookups(t *testing.T, e *env) {
	alice := e.user("acme", "alice")
	hp := e.principal("acme", "harness", []string{"agent"}, nil, nil)
	harness := e.act(hp, "alice")
	own := e.fact(alice, "n", "rent to ACCT-1042")
	for _, bad := range []string{"x\x00y", "\xff\xfe", own.ID + "\x00"} {
		if _, err := e.svc.Act(e.ctx, hp, bad); !errors.Is(err, custody.ErrSubjectNotAllowed) {
			t.Errorf("act for %q: err = %v, want subject not allowed", bad, err)
		}
		if _, err := e.svc.Get(e.ctx, alice, bad); !isNotFound(err) {
			t.Errorf("get %q: err = %v, want not found", bad, err)
		}
		d, err := e.svc.Gate(e.ctx, harness, custody.GateInput{Action: "send_money",
			Args: map[string]any{"recipient": "ACCT-1042"}, Justification: []string{bad, own.ID}})
		if err != nil || d.Decision != custody.GateDeny {
			t.Errorf("gate justified by %q: %v, %v; want deny", bad, d, err)
		}
		if _, err := e.svc.Remember(e.ctx, harness, custody.Candidate{Namespace: "n", Class: custody.ClassEpisode, Body: "b", Channel: "agent", Session: bad}); !isNotFound(err) {
			t.Errorf("remember in session %q: err = %v, want not found", bad, err)
		}
		e.view(func(tx custody.Tx) error {
			if _, err := tx.Record(e.ctx, "acme", bad); !isNotFound(err) {
				t.Errorf("record %q: err = %v", bad, err)
			}
			if _, err := tx.Principal(e.ctx, "acme", bad); !isNotFound(err) {
				t.Errorf("principal %q: err = %v", bad, err)
			}
			if ok, err := tx.Tombstoned(e.ctx, "acme", bad); ok || err != nil {
				t.Errorf("tombstoned %q = %v, %v", bad, ok, err)
			}
			// The transaction is still usable.
			if _, err := tx.Record(e.ctx, "acme", own.ID); err != nil {
				t.Errorf("record after a lookup of %q: %v", bad, err)
			}
			return nil
		})
	}
	// Twin: the same calls with good values find what is there.
	d, err := e.svc.Gate(e.ctx, harness, custody.GateInput{Action: "send_money",
		Args: map[string]any{"recipient": "ACCT-1042"}, Justification: []string{own.ID}})
	if err != nil || d.Decision != custody.GateAllow {
		t.Errorf("gate with good values: %v, %v; want allow", d, err)
	}
	e.verify()
}

// An expiry far in the future is kept exactly (or refused as invalid
// input): the record is visible until then and the log still verifies.
func testFarFutureExpiry(t *testing.T, e *env) {
	alice := e.user("acme", "alice")
	for _, exp := range []time.Time{
		time.Date(2200, 1, 2, 3, 4, 5, 6, time.UTC),
		time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
	} {
		d, err := e.svc.Remember(e.ctx, alice, custody.Candidate{Namespace: "n", Class: custody.ClassFact,
			Body: "expires " + exp.Format(time.RFC3339), Channel: "user", ExpiresAt: &exp})
		if errors.Is(err, custody.ErrInvalid) {
			continue
		}
		if err != nil {
			t.Fatalf("expiry %s: %v", exp, err)
		}
		r := e.record("acme", d.ID)
		if r.ExpiresAt == nil || !r.ExpiresAt.Equal(exp) {
			t.Errorf("expiry %s stored as %v", exp, r.ExpiresAt)
		}
		if !e.visible(alice, d.ID) {
			t.Errorf("a record expiring at %s is not visible now", exp)
		}
	}
	e.verify()
}
