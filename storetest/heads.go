package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	custody "github.com/custody-mem/custody"
	"pgregory.net/rapid"
)

// testNewestVersion checks, over random sequences of keyed writes, admissions,
// quarantines, approvals, retirements, derivations and rebuilds, that
// retrieval returns exactly the newest admitted version of each key, as the
// store's own version history says (backends may keep that as a stored flag).
func testNewestVersion(t *testing.T, e *env) {
	alice := e.user("acme", "alice")
	harness := e.act(e.principal("acme", "harness", []string{"agent"}, []string{"tool:email", custody.ChannelDerive}, nil), "alice")
	rev := e.act(e.principal("acme", "rev", []string{"reviewer"}, nil, nil), "")
	keys := []string{"a", "b"}
	iter := 0
	rapid.Check(t, func(rt *rapid.T) {
		iter++
		ns := fmt.Sprintf("heads%d", iter)
		var ids []string
		pick := func(label string) (string, bool) {
			if len(ids) == 0 {
				return "", false
			}
			return ids[rapid.IntRange(0, len(ids)-1).Draw(rt, label)], true
		}
		write := func(c *custody.Caller, channel, key string, parents []custody.Edge) {
			d, err := e.svc.Remember(e.ctx, c, custody.Candidate{Namespace: ns, Key: key, Class: custody.ClassPreference,
				Body: fmt.Sprintf("%s value %d", key, len(ids)), Channel: channel, DerivedFrom: parents})
			if err != nil {
				rt.Fatalf("remember %s on %s: %v", key, channel, err)
			}
			ids = append(ids, d.ID)
		}
		for range rapid.IntRange(1, 12).Draw(rt, "ops") {
			key := rapid.SampledFrom(keys).Draw(rt, "key")
			op := rapid.IntRange(0, 6).Draw(rt, "op")
			switch op {
			case 0:
				write(alice, custody.ChannelUser, key, nil)
			case 1:
				write(harness, "tool:email", key, nil)
			case 2:
				if p, ok := pick("parent"); ok {
					write(harness, custody.ChannelDerive, key, []custody.Edge{{ID: p, Weight: 1}})
				}
			case 3:
				if id, ok := pick("quarantine"); ok {
					e.svc.Quarantine(e.ctx, rev, id, "") // refused for records already out: that is fine here
				}
			case 4:
				if id, ok := pick("approve"); ok {
					e.svc.Approve(e.ctx, rev, id)
				}
			case 5:
				if id, ok := pick("retire"); ok {
					e.svc.Retire(e.ctx, rev, id, "", false)
				}
			case 6:
				if id, ok := pick("rebuild"); ok {
					e.svc.Rebuild(e.ctx, rev, id, "")
				}
			}
			for _, k := range keys {
				want := newestAdmitted(rt, e, ns, k)
				page, err := e.svc.List(e.ctx, alice, custody.ListInput{Namespace: ns, Key: k})
				if err != nil {
					rt.Fatal(err)
				}
				var got []string
				for _, r := range page.Items {
					got = append(got, r.ID)
				}
				if !slices.Equal(got, want) {
					rt.Fatalf("key %s after op %d: list = %v, want the newest admitted version %v", k, op, got, want)
				}
			}
		}
		for _, id := range ids {
			r := e.record("acme", id)
			want := slices.Contains(newestAdmitted(rt, e, ns, r.Key), id)
			if _, err := e.svc.Get(e.ctx, alice, id); (err == nil) != want {
				rt.Fatalf("get %s (key %s, v%d, %s) = %v; want found %v", id, r.Key, r.Version, r.State, err, want)
			}
		}
	})
}

// newestAdmitted is the id of the newest admitted version of key, from the
// store's version history (nil when none is admitted).
func newestAdmitted(rt *rapid.T, e *env, ns, key string) []string {
	var want []string
	err := e.store.View(e.ctx, func(tx custody.Tx) error {
		vs, err := tx.Versions(e.ctx, "acme", "alice", ns, key)
		for _, v := range slices.Backward(vs) {
			if v.State == custody.StateAdmitted {
				want = []string{v.ID}
				break
			}
		}
		return err
	})
	if err != nil {
		rt.Fatal(err)
	}
	return want
}

// testVersionsOutOfOrder inserts a key's versions newest first, as a restore
// may: the newest admitted version stays the one in force.
func testVersionsOutOfOrder(t *testing.T, e *env) {
	rec := func(id string, version int) *custody.Record {
		return &custody.Record{ID: id, Tenant: "oo", Owner: "alice", Namespace: "n", Key: "k", Class: custody.ClassFact,
			Body: id, Channel: "user", Writer: "oo/alice", Authority: custody.AuthorityUser, Audience: "owner",
			State: custody.StateAdmitted, CreatedAt: Start, Version: version, Parents: []custody.Edge{}}
	}
	v1, v2, v3 := rec("01JDOO00000000000000000001", 1), rec("01JDOO00000000000000000002", 2), rec("01JDOO00000000000000000003", 3)
	insert := func(rs ...*custody.Record) {
		t.Helper()
		if err := e.store.Update(e.ctx, func(tx custody.Tx) error {
			for _, r := range rs {
				if err := tx.InsertRecord(e.ctx, r); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	sc := custody.Scope{Tenant: "oo", Subject: "alice", Now: e.clock.Now()}
	inForce := func(want string) {
		t.Helper()
		recs, err := e.store.List(e.ctx, sc, custody.ListFilter{Namespace: "n", Key: "k", Limit: 10})
		if err != nil || len(recs) != 1 || recs[0].ID != want {
			t.Fatalf("list by key = %v, %v; want only %s", recordIDs(recs), err, want)
		}
		e.view(func(tx custody.Tx) error {
			cur, err := tx.Current(e.ctx, "oo", "alice", "n", "k")
			if err != nil || cur == nil || cur.ID != want {
				t.Errorf("current = %v, %v; want %s", cur, err, want)
			}
			if id, err := tx.CurrentID(e.ctx, "oo", "alice", "n", "k"); id != want || err != nil {
				t.Errorf("current id = %q, %v; want %s", id, err, want)
			}
			return nil
		})
	}
	insert(v2)
	inForce(v2.ID)
	insert(v1) // an older version arrives later
	inForce(v2.ID)
	insert(v3)
	inForce(v3.ID)
	for _, id := range []string{v1.ID, v2.ID} {
		if _, err := e.store.Get(e.ctx, sc, id); !errors.Is(err, custody.ErrNotFound) {
			t.Errorf("superseded %s: get err = %v, want not found", id, err)
		}
	}
}
