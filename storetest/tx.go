package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	custody "github.com/custody-mem/custody"
)

// Update commits all or nothing; View cannot write; concurrent Updates are
// serialised.
func testTransactions(t *testing.T, e *env) {
	rec := func(id string) *custody.Record {
		return &custody.Record{ID: id, Tenant: "tx", Owner: "alice", Namespace: "n", Class: custody.ClassEpisode, Body: "b",
			Channel: "user", Writer: "tx/alice", Authority: custody.AuthorityUser, Audience: "owner", State: custody.StateAdmitted,
			CreatedAt: Start, Version: 1, Parents: []custody.Edge{}}
	}
	size := func(tenant ...string) uint64 {
		t.Helper()
		n, err := e.store.LogSize(e.ctx, append(tenant, "tx")[0])
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	absent := func(id string) {
		t.Helper()
		e.view(func(tx custody.Tx) error {
			if _, err := tx.Record(e.ctx, "tx", id); !isNotFound(err) {
				t.Errorf("record %s: err = %v, want not found", id, err)
			}
			return nil
		})
	}
	boom := errors.New("boom")
	err := e.store.Update(e.ctx, func(tx custody.Tx) error {
		if err := tx.InsertRecord(e.ctx, rec("01JDTX0000000000000000000A")); err != nil {
			return err
		}
		if _, err := tx.AppendLeaf(e.ctx, "tx", []byte("leaf")); err != nil {
			return err
		}
		if _, err := tx.Record(e.ctx, "tx", "01JDTX0000000000000000000A"); err != nil {
			return fmt.Errorf("a transaction does not see its own write: %w", err)
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Errorf("update returning an error: err = %v, want boom", err)
	}
	absent("01JDTX0000000000000000000A")
	if n := size(); n != 0 {
		t.Errorf("log size after a rolled-back append = %d, want 0", n)
	}
	err = e.store.View(e.ctx, func(tx custody.Tx) error {
		if err := tx.InsertRecord(e.ctx, rec("01JDTX0000000000000000000B")); err == nil {
			t.Error("insert in a read-only transaction succeeded")
		}
		if _, err := tx.AppendLeaf(e.ctx, "tx", []byte("leaf")); err == nil {
			t.Error("append in a read-only transaction succeeded")
		}
		return nil
	})
	if err != nil {
		t.Logf("view after refused writes: %v", err)
	}
	absent("01JDTX0000000000000000000B")
	if n := size(); n != 0 {
		t.Errorf("log size after a read-only append = %d, want 0", n)
	}
	if err := e.store.View(e.ctx, func(tx custody.Tx) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("view returning an error: err = %v, want boom", err)
	}
	// Twin: a committed update is seen, and a duplicate id is refused.
	if err := e.store.Update(e.ctx, func(tx custody.Tx) error { return tx.InsertRecord(e.ctx, rec("01JDTX0000000000000000000C")) }); err != nil {
		t.Fatal(err)
	}
	if r := e.record("tx", "01JDTX0000000000000000000C"); r.Body != "b" {
		t.Errorf("committed record = %+v", r)
	}
	if err := e.store.Update(e.ctx, func(tx custody.Tx) error { return tx.InsertRecord(e.ctx, rec("01JDTX0000000000000000000C")) }); err == nil {
		t.Error("a duplicate id was inserted")
	}
	if err := e.store.Update(e.ctx, func(tx custody.Tx) error { return tx.UpdateRecord(e.ctx, rec("01JDTX0000000000000000000D")) }); !isNotFound(err) {
		t.Errorf("updating an unknown record: err = %v, want not found", err)
	}

	// Concurrent writers: versions of one key stay unique and the log
	// contiguous.
	alice := e.user("acme", "alice")
	before := size("acme")
	const writers, each = 6, 5
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				_, err := e.svc.Remember(e.ctx, alice, custody.Candidate{Namespace: "c", Key: "counter", Class: custody.ClassFact,
					Body: fmt.Sprintf("writer %d write %d", w, i), Channel: "user"})
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	e.view(func(tx custody.Tx) error {
		vs, err := tx.Versions(e.ctx, "acme", "alice", "c", "counter")
		if err != nil {
			return err
		}
		var got []int
		for _, v := range vs {
			got = append(got, v.Version)
		}
		want := make([]int, writers*each)
		for i := range want {
			want[i] = i + 1
		}
		if !slices.Equal(got, want) {
			t.Errorf("versions = %v, want 1..%d", got, writers*each)
		}
		return nil
	})
	if n := size("acme"); n != before+writers*each {
		t.Errorf("log grew by %d, want %d", n-before, writers*each)
	}
	checkContiguous(t, e, "acme")
}

// Principals: by token, by name, listed by tenant and name.
func testPrincipals(t *testing.T, e *env) {
	type made struct {
		p     *custody.Principal
		token string
	}
	var ps []made
	for _, in := range []custody.PrincipalInput{
		{Tenant: "acme", Name: "bob", Roles: []string{"user"}},
		{Tenant: "acme", Name: "alice", Roles: []string{"user", "reviewer"}, Groups: []string{"fin", "ops"}},
		{Tenant: "acme-corp", Name: "alice", Roles: []string{"agent"}, Channels: []string{"agent", "tool:web"}},
	} {
		p, token, err := e.svc.AddPrincipal(e.ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, made{p, token})
	}
	if _, _, err := e.svc.AddPrincipal(e.ctx, custody.PrincipalInput{Tenant: "acme", Name: "bob", Roles: []string{"user"}}); !errors.Is(err, custody.ErrConflict) {
		t.Errorf("adding bob twice: err = %v, want conflict", err)
	}
	same := func(a, b *custody.Principal) bool {
		return a.Tenant == b.Tenant && a.Name == b.Name && slices.Equal(a.Roles, b.Roles) && slices.Equal(a.Channels, b.Channels) &&
			len(a.Groups) == len(b.Groups) && (len(a.Groups) == 0 || slices.Equal(a.Groups, b.Groups)) &&
			slices.Equal(a.PublicKey, b.PublicKey) && a.CreatedAt.Equal(b.CreatedAt)
	}
	for _, m := range ps {
		got, err := e.store.PrincipalByToken(e.ctx, custody.HashToken(m.token))
		if err != nil || !same(got, m.p) {
			t.Errorf("by token %s: %+v, %v; want %+v", m.p.ID(), got, err, m.p)
		}
		if p, err := e.svc.Authenticate(e.ctx, m.token); err != nil || p.ID() != m.p.ID() {
			t.Errorf("authenticate %s: %v, %v", m.p.ID(), p, err)
		}
	}
	if _, err := e.store.PrincipalByToken(e.ctx, custody.HashToken("cst_unknown")); !isNotFound(err) {
		t.Errorf("unknown token: err = %v, want not found", err)
	}
	e.view(func(tx custody.Tx) error {
		for _, m := range ps {
			got, err := tx.Principal(e.ctx, m.p.Tenant, m.p.Name)
			if err != nil || !same(got, m.p) {
				t.Errorf("principal %s = %+v, %v", m.p.ID(), got, err)
			}
			if h, err := tx.TokenHash(e.ctx, m.p.Tenant, m.p.Name); err != nil || !slices.Equal(h, custody.HashToken(m.token)) {
				t.Errorf("token hash of %s: %x, %v", m.p.ID(), h, err)
			}
			if k, err := tx.SealedKey(e.ctx, m.p.Tenant, m.p.Name); err != nil || len(k) == 0 {
				t.Errorf("sealed key of %s: %d bytes, %v", m.p.ID(), len(k), err)
			}
		}
		if _, err := tx.Principal(e.ctx, "acme-corp", "bob"); !isNotFound(err) {
			t.Errorf("bob in acme-corp: err = %v, want not found", err)
		}
		if _, err := tx.SealedKey(e.ctx, "acme-corp", "bob"); !isNotFound(err) {
			t.Errorf("sealed key of a stranger: err = %v, want not found", err)
		}
		if _, err := tx.TokenHash(e.ctx, "acme-corp", "bob"); !isNotFound(err) {
			t.Errorf("token hash of a stranger: err = %v, want not found", err)
		}
		for _, tc := range []struct {
			tenant string
			want   []string
		}{{"acme", []string{"acme/alice", "acme/bob"}}, {"acme-corp", []string{"acme-corp/alice"}}, {"", []string{"acme/alice", "acme/bob", "acme-corp/alice"}}, {"nobody", nil}} {
			got, err := tx.Principals(e.ctx, tc.tenant)
			if err != nil {
				return err
			}
			var ids []string
			for _, p := range got {
				ids = append(ids, p.ID())
			}
			if !slices.Equal(ids, tc.want) {
				t.Errorf("principals of %q = %v, want %v", tc.tenant, ids, tc.want)
			}
		}
		return nil
	})
}

// InState pages through records by state, oldest first; ScanRecords visits
// every record of a tenant, or of all.
func testInStateAndScan(t *testing.T, e *env) {
	var quarantined []string
	for _, tenant := range []string{"acme", "acme-corp"} {
		alice := e.user(tenant, "alice")
		h := e.act(e.principal(tenant, "harness", []string{"agent"}, []string{"tool:email"}, nil), "alice")
		for i := range 3 {
			quarantined = append(quarantined, e.remember(h, custody.Candidate{Namespace: "n", Class: custody.ClassFact, Body: fmt.Sprintf("q%d", i), Channel: "tool:email"}).ID)
			e.fact(alice, "n", "admitted")
		}
	}
	e.view(func(tx custody.Tx) error {
		in := func(tenant string, states []custody.State, after string, limit int) []string {
			recs, err := tx.InState(e.ctx, tenant, states, after, limit)
			if err != nil {
				t.Fatal(err)
			}
			return recordIDs(recs)
		}
		q := []custody.State{custody.StateQuarantined}
		if got := in("acme", q, "", 10); !slices.Equal(got, quarantined[:3]) {
			t.Errorf("acme quarantined = %v, want %v", got, quarantined[:3])
		}
		if got := in("acme", q, quarantined[0], 1); !slices.Equal(got, quarantined[1:2]) {
			t.Errorf("after the first, limit 1 = %v, want %v", got, quarantined[1:2])
		}
		if got := in("", q, "", 10); !slices.Equal(got, quarantined) {
			t.Errorf("all tenants = %v, want %v", got, quarantined)
		}
		if got := in("acme", []custody.State{custody.StateQuarantined, custody.StateAdmitted}, "", 100); len(got) != 6 {
			t.Errorf("two states = %d records, want 6", len(got))
		}
		if got := in("acme", []custody.State{custody.StateRetired}, "", 10); len(got) != 0 {
			t.Errorf("retired = %v, want none", got)
		}
		count := func(tenant string) int {
			n := 0
			if err := tx.ScanRecords(e.ctx, tenant, func(r *custody.Record) error {
				if tenant != "" && r.Tenant != tenant {
					t.Errorf("scan of %s visited a record of %s", tenant, r.Tenant)
				}
				n++
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			return n
		}
		if a, c, all := count("acme"), count("acme-corp"), count(""); a != 6 || c != 6 || all != 12 {
			t.Errorf("scan counts = %d, %d, %d; want 6, 6, 12", a, c, all)
		}
		stop := errors.New("stop")
		if err := tx.ScanRecords(e.ctx, "", func(*custody.Record) error { return stop }); !errors.Is(err, stop) {
			t.Errorf("scan callback error: err = %v, want stop", err)
		}
		return nil
	})
}

// Descendants follows child edges transitively, once per record, within
// the tenant; SetStates moves a batch of records of one tenant.
func testDescendants(t *testing.T, e *env) {
	rec := func(id, tenant string, parents ...string) *custody.Record {
		r := &custody.Record{ID: id, Tenant: tenant, Owner: "alice", Namespace: "n", Class: custody.ClassEpisode, Body: "b " + id,
			Channel: "derive", Writer: tenant + "/alice", Authority: custody.AuthorityUser, Audience: "owner",
			State: custody.StateAdmitted, CreatedAt: Start, Version: 1, PolicyVersion: "pv", Parents: []custody.Edge{}}
		for _, p := range parents {
			r.Parents = append(r.Parents, custody.Edge{ID: p, Weight: 1})
		}
		return r
	}
	const (
		p  = "01JDDE0000000000000000000P"
		c1 = "01JDDE0000000000000000001C"
		c2 = "01JDDE0000000000000000002C"
		c3 = "01JDDE0000000000000000003C"
		x  = "01JDDE000000000000000000XX"
		o  = "01JDDE0000000000000000000Z"
	)
	// p → c1 → c2, p → c3 → c2 (a diamond); x stands apart; o is another
	// tenant's record naming p as its parent.
	recs := []*custody.Record{rec(p, "acme"), rec(c1, "acme", p), rec(c3, "acme", p), rec(c2, "acme", c1, c3), rec(x, "acme"), rec(o, "acme-corp", p)}
	recs[2].State = custody.StateQuarantined
	if err := e.store.Update(e.ctx, func(tx custody.Tx) error {
		for _, r := range recs {
			if err := tx.InsertRecord(e.ctx, r); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// idStates drops the stores' row handles, which tests cannot predict.
	idStates := func(in []custody.IDState) []custody.IDState {
		out := make([]custody.IDState, len(in))
		for i, d := range in {
			out[i] = custody.IDState{ID: d.ID, State: d.State}
		}
		return out
	}
	var desc []custody.IDState
	e.view(func(tx custody.Tx) error {
		var err error
		desc, err = tx.Descendants(e.ctx, "acme", p)
		want := []custody.IDState{{ID: c1, State: custody.StateAdmitted}, {ID: c2, State: custody.StateAdmitted}, {ID: c3, State: custody.StateQuarantined}}
		if err != nil || !slices.Equal(idStates(desc), want) {
			t.Errorf("descendants of p = %v, %v; want %v", desc, err, want)
		}
		if got, err := tx.Descendants(e.ctx, "acme", c2); err != nil || len(got) != 0 {
			t.Errorf("descendants of a leaf = %v, %v", got, err)
		}
		if got, err := tx.Descendants(e.ctx, "acme-corp", p); err != nil || !slices.Equal(idStates(got), []custody.IDState{{ID: o, State: custody.StateAdmitted}}) {
			t.Errorf("acme-corp's descendants of p = %v, %v; want only its own %s", got, err, o)
		}
		return nil
	})
	if len(desc) != 3 {
		t.FailNow()
	}
	rc := &custody.Receipt{Decision: custody.StateSuspended, Rules: []string{"cascade"}, Reason: "test", Actor: "acme/rev", Time: Start, LogIndex: 7}
	if err := e.store.Update(e.ctx, func(tx custody.Tx) error {
		// c1 as Descendants gave it, c2 by id alone: both are moved.
		if err := tx.SetStates(e.ctx, "acme", []custody.IDState{desc[0], {ID: c2}}, custody.StateSuspended, 7, rc); err != nil {
			return err
		}
		// Another tenant's batch does not reach c3, by handle or by id.
		if err := tx.SetStates(e.ctx, "acme-corp", desc[2:], custody.StateRetired, 8, rc); err != nil {
			return err
		}
		return tx.SetStates(e.ctx, "acme-corp", []custody.IDState{{ID: c3}}, custody.StateRetired, 8, rc)
	}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id    string
		state custody.State
		index uint64
	}{{c1, custody.StateSuspended, 7}, {c2, custody.StateSuspended, 7}, {c3, custody.StateQuarantined, 0}, {p, custody.StateAdmitted, 0}} {
		r := e.record("acme", tc.id)
		if r.State != tc.state || r.LogIndex != tc.index {
			t.Errorf("%s: %s at %d, want %s at %d", tc.id, r.State, r.LogIndex, tc.state, tc.index)
		}
		// The rows share the state and log index, not the policy version
		// the receipt leaves empty: it reads back exactly as written.
		if got, want := receiptJSON(t, r.Receipt), receiptJSON(t, rc); tc.index == 7 && got != want {
			t.Errorf("%s receipt = %s, want %s", tc.id, got, want)
		}
	}
}
