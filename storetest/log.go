package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/tlog"
	"github.com/transparency-dev/merkle/compact"
)

// Workload runs a mix of every kind of write through svc, in tenants
// "acme" and "acme-corp", and returns the ids it wrote. It fails tb on any
// error.
func Workload(tb testing.TB, svc *custody.Service, clock *Clock) []string {
	tb.Helper()
	ctx := tb.Context()
	must := func(err error) {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
	}
	add := func(in custody.PrincipalInput) *custody.Principal {
		p, _, err := svc.AddPrincipal(ctx, in)
		must(err)
		return p
	}
	act := func(p *custody.Principal, subject string) *custody.Caller {
		c, err := svc.Act(ctx, p, subject)
		must(err)
		return c
	}
	var ids []string
	remember := func(c *custody.Caller, in custody.Candidate) *custody.Decision {
		d, err := svc.Remember(ctx, c, in)
		must(err)
		ids = append(ids, d.ID)
		return d
	}
	for _, tenant := range []string{"acme", "acme-corp"} {
		alice := act(add(custody.PrincipalInput{Tenant: tenant, Name: "alice", Roles: []string{"user"}, Groups: []string{"fin"}}), "")
		hp := add(custody.PrincipalInput{Tenant: tenant, Name: "harness", Roles: []string{"agent"}, Channels: []string{"agent", "tool:email", "derive"}})
		h := act(hp, "alice")
		rev := act(add(custody.PrincipalInput{Tenant: tenant, Name: "rev", Roles: []string{"reviewer"}}), "")
		po := act(add(custody.PrincipalInput{Tenant: tenant, Name: "po", Roles: []string{"policy_owner"}}), "")

		fact := remember(alice, custody.Candidate{Namespace: "w", Key: "payee", Class: custody.ClassFact, Body: "ACCT-1", Channel: "user", Audience: "group:fin"})
		pend := remember(alice, custody.Candidate{Namespace: "w", Key: "payee", Class: custody.ClassFact, Body: "ACCT-2", Channel: "user"})
		_, err := svc.Confirm(ctx, alice, pend.ID)
		must(err)
		q := remember(h, custody.Candidate{Namespace: "w", Class: custody.ClassFact, Body: "from an email", Channel: "tool:email"})
		q2 := remember(h, custody.Candidate{Namespace: "w", Class: custody.ClassFact, Body: "another email", Channel: "tool:email"})
		_, err = svc.Approve(ctx, rev, q.ID)
		must(err)
		_, err = svc.Reject(ctx, rev, q2.ID, "")
		must(err)
		ep := remember(h, custody.Candidate{Namespace: "w", Class: custody.ClassEpisode, Body: "an agent episode", Channel: "agent"})
		d := remember(h, custody.Candidate{Namespace: "w", Class: custody.ClassEpisode, Body: "a summary", Channel: "derive",
			DerivedFrom: []custody.Edge{{ID: fact.ID, Weight: 1}, {ID: ep.ID, Weight: 0.5}}})
		remember(h, custody.Candidate{Namespace: "w", Class: custody.ClassEpisode, Body: "a summary of a summary", Channel: "derive",
			DerivedFrom: []custody.Edge{{ID: d.ID, Weight: 1}}})
		_, err = svc.Quarantine(ctx, rev, fact.ID, "")
		must(err)
		_, err = svc.Approve(ctx, rev, fact.ID)
		must(err)
		_, err = svc.Rebuild(ctx, rev, d.ID, "")
		must(err)
		r := remember(alice, custody.Candidate{Namespace: "w", Class: custody.ClassFact, Body: "to retire", Channel: "user"})
		_, err = svc.Retire(ctx, rev, r.ID, "", true)
		must(err)
		s, err := svc.OpenSession(ctx, h)
		must(err)
		_, err = svc.Observe(ctx, h, s.ID, custody.ObservationInput{Channel: "tool:email", Text: "pay ACCT-9"})
		must(err)
		remember(h, custody.Candidate{Namespace: "w", Class: custody.ClassPreference, Body: "pay ACCT-9", Channel: "agent", Session: s.ID})
		_, err = svc.Gate(ctx, h, custody.GateInput{Action: "send_money", Args: map[string]any{"to": "ACCT-9"}, Session: s.ID})
		must(err)
		_, err = svc.ConfirmAction(ctx, alice, "send_money", map[string]any{"to": "ACCT-2"})
		must(err)
		_, _, err = svc.SetPolicy(ctx, po, PolicyText())
		must(err)
		clock.Advance(time.Second)
	}
	return ids
}

// checkContiguous checks that the leaves of tenant's log are numbered
// 0..n-1 and parse as entries of the tenant stored with them.
func checkContiguous(t *testing.T, e *env, tenant string) []custody.Leaf {
	t.Helper()
	size, err := e.store.LogSize(e.ctx, tenant)
	if err != nil {
		t.Fatal(err)
	}
	leaves, err := e.store.Leaves(e.ctx, tenant, 0, size)
	if err != nil {
		t.Fatal(err)
	}
	if uint64(len(leaves)) != size {
		t.Fatalf("%d leaves for a log of size %d", len(leaves), size)
	}
	for i, l := range leaves {
		if l.Index != uint64(i) {
			t.Fatalf("leaf %d has index %d", i, l.Index)
		}
		en, err := tlog.ParseLeaf(l.Data)
		if err != nil || en.Tenant != l.Tenant || l.Tenant != tenant {
			t.Fatalf("leaf %d: %v (tenant %q, stored %q)", i, err, en.Tenant, l.Tenant)
		}
	}
	return leaves
}

// The logs after a mixed workload in two tenants: each tenant's log has
// contiguous leaves, inclusion and consistency proofs that verify (and fail
// when tampered), checkpoints, records pointing at their last entry, and a
// replay that verifies — until a record is changed behind the log's back.
func testLog(t *testing.T, e *env) {
	if _, _, err := e.store.LatestCheckpoint(e.ctx, "acme"); !isNotFound(err) {
		t.Errorf("checkpoint of an empty store: err = %v, want not found", err)
	}
	if n, err := e.store.LogSize(e.ctx, "acme"); n != 0 || err != nil {
		t.Errorf("empty log size = %d, %v", n, err)
	}
	ids := Workload(t, e.svc, e.clock)
	tenants := []string{"acme", "acme-corp"}
	if got, err := e.store.LogTenants(e.ctx); err != nil || !slices.Equal(got, tenants) {
		t.Errorf("LogTenants = %q, %v; want %q", got, err, tenants)
	}
	var msgs [][]byte
	var total uint64
	for _, tenant := range tenants {
		msgs = append(msgs, checkTenantLog(t, e, tenant))
		n, _ := e.store.LogSize(e.ctx, tenant)
		total += n
	}

	// Each record's log index names its last entry, in its tenant's log.
	e.view(func(tx custody.Tx) error {
		for _, id := range ids {
			tenant := "acme"
			r, err := tx.Record(e.ctx, tenant, id)
			if isNotFound(err) {
				tenant = "acme-corp"
				r, err = tx.Record(e.ctx, tenant, id)
			}
			if err != nil {
				return err
			}
			ls, err := tx.Leaves(e.ctx, tenant, r.LogIndex, r.LogIndex+1)
			if err != nil || len(ls) != 1 {
				return fmt.Errorf("record %s: leaf %d of %s's log: %d leaves, %v", id, r.LogIndex, tenant, len(ls), err)
			}
			en, err := tlog.ParseLeaf(ls[0].Data)
			if err != nil {
				return err
			}
			if en.RecordID != r.ID && !slices.Contains(en.RecordIDs, r.ID) {
				t.Errorf("record %s: log index %d is an entry about %q %v", r.ID, r.LogIndex, en.RecordID, en.RecordIDs)
			}
			if en.NewState != string(r.State) {
				t.Errorf("record %s: state %s, its last entry says %s", r.ID, r.State, en.NewState)
			}
		}
		return nil
	})

	rep, err := e.svc.Verify(e.ctx, custody.VerifyOptions{Checkpoints: msgs})
	if err != nil {
		t.Fatalf("verify after the workload: %v", err)
	}
	if rep.Entries != total || rep.Records != len(ids) || rep.Principals != 8 || rep.Checkpoints != 4 || len(rep.Logs) != 2 {
		t.Errorf("verify report = %+v, want %d entries, %d records, 8 principals, 4 checkpoints, 2 logs", rep, total, len(ids))
	}
	for _, l := range rep.Logs {
		if l.Problem != "" || l.Origin != e.svc.LogOrigin(l.Tenant) || len(l.Root) != tlog.HashSize {
			t.Errorf("verify report of %s's log = %+v", l.Tenant, l)
		}
	}

	// A change behind the log's back is found.
	err = e.store.Update(e.ctx, func(tx custody.Tx) error {
		r, err := tx.Record(e.ctx, "acme", ids[0])
		if err != nil {
			return err
		}
		r.Audience = "tenant"
		return tx.UpdateRecord(e.ctx, r)
	})
	if err != nil {
		t.Fatal(err)
	}
	var diff *custody.Difference
	if _, err := e.svc.Verify(e.ctx, custody.VerifyOptions{}); !errors.As(err, &diff) {
		t.Errorf("verify after tampering: err = %v, want a difference", err)
	}
}

// checkTenantLog checks tenant's log on its own: its proofs and its
// checkpoint, which it returns.
func checkTenantLog(t *testing.T, e *env, tenant string) []byte {
	t.Helper()
	leaves := checkContiguous(t, e, tenant)
	size := uint64(len(leaves))
	if size < 20 {
		t.Fatalf("workload wrote only %d entries to %s's log", size, tenant)
	}
	if got, err := e.store.Leaves(e.ctx, tenant, 5, 8); err != nil || len(got) != 3 || got[0].Index != 5 || !bytes.Equal(got[2].Data, leaves[7].Data) {
		t.Errorf("leaves [5,8) = %d leaves, %v", len(got), err)
	}
	if got, err := e.store.Leaves(e.ctx, tenant, size, size+10); err != nil || len(got) != 0 {
		t.Errorf("leaves past the end = %d, %v", len(got), err)
	}
	log := custody.LogOf(e.store, tenant)
	root, err := tlog.RootHash(e.ctx, log, size)
	if err != nil {
		t.Fatal(err)
	}
	for i := range size {
		p, err := e.svc.InclusionProof(e.ctx, tenant, i, size)
		if err != nil {
			t.Fatalf("inclusion proof %d: %v", i, err)
		}
		if err := tlog.VerifyInclusion(tlog.LeafHash(leaves[i].Data), i, size, p, root); err != nil {
			t.Errorf("inclusion of %d: %v", i, err)
		}
		if err := tlog.VerifyInclusion(tlog.LeafHash(leaves[(i+1)%size].Data), i, size, p, root); err == nil {
			t.Errorf("inclusion of %d verified for another leaf", i)
		}
	}
	for m := uint64(1); m <= size; m++ {
		r1, err := tlog.RootHash(e.ctx, log, m)
		if err != nil {
			t.Fatal(err)
		}
		p, err := e.svc.ConsistencyProof(e.ctx, tenant, m, size)
		if err != nil {
			t.Fatalf("consistency proof %d→%d: %v", m, size, err)
		}
		if err := tlog.VerifyConsistency(m, size, p, r1, root); err != nil {
			t.Errorf("consistency %d→%d: %v", m, size, err)
		}
		if m < size {
			bad := slices.Clone(r1)
			bad[0] ^= 1
			if err := tlog.VerifyConsistency(m, size, p, bad, root); err == nil {
				t.Errorf("consistency %d→%d verified a wrong old root", m, size)
			}
		}
	}
	if _, err := e.svc.InclusionProof(e.ctx, tenant, size, size); !errors.Is(err, custody.ErrInvalid) {
		t.Errorf("inclusion proof out of range: err = %v, want invalid", err)
	}

	msg, err := e.svc.Checkpoint(e.ctx, tenant)
	if err != nil {
		t.Fatal(err)
	}
	cs, note, err := e.store.LatestCheckpoint(e.ctx, tenant)
	if err != nil || cs != size || !bytes.Equal(note, msg) {
		t.Errorf("latest checkpoint = %d, %v; want %d and the signed note", cs, err, size)
	}
	cp, err := e.svc.OpenCheckpoint(tenant, note)
	if err != nil || cp.Size != size || !bytes.Equal(cp.Root, root) || cp.Origin != e.svc.LogOrigin(tenant) {
		t.Errorf("checkpoint = %+v, %v; want size %d root %x origin %s", cp, err, size, root, e.svc.LogOrigin(tenant))
	}
	return msg
}

// Concurrent Updates, some of which fail after appending: the log holds
// exactly the leaves of the committed ones, numbered without gaps, and the
// stored tree nodes are those recomputed from the leaves.
func testConcurrentRollback(t *testing.T, e *env) {
	const writers, each = 6, 6
	var mu sync.Mutex
	committed := map[string]bool{}
	boom := errors.New("boom")
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				id := fmt.Sprintf("01JDCR%02d%02d0000000000000000", w, i)
				err := e.store.Update(e.ctx, func(tx custody.Tx) error {
					r := &custody.Record{ID: id, Tenant: "acme", Owner: "alice", Namespace: "n", Class: custody.ClassEpisode, Body: id,
						Channel: "user", Writer: "acme/alice", Authority: custody.AuthorityUser, Audience: "owner",
						State: custody.StateAdmitted, CreatedAt: Start, Version: 1, Parents: []custody.Edge{}}
					idx, err := tx.AppendLeaf(e.ctx, "acme", []byte(id))
					if err != nil {
						return err
					}
					r.LogIndex = idx
					if err := tx.InsertRecord(e.ctx, r); err != nil {
						return err
					}
					if i%3 == 1 {
						return boom
					}
					return nil
				})
				switch {
				case err == nil:
					mu.Lock()
					committed[id] = true
					mu.Unlock()
				case !errors.Is(err, boom):
					t.Errorf("update %s: %v", id, err)
				}
			}
		})
	}
	wg.Wait()
	size, err := e.store.LogSize(e.ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if size != uint64(len(committed)) || len(committed) != writers*each*2/3 {
		t.Fatalf("log size %d, %d committed; want %d", size, len(committed), writers*each*2/3)
	}
	leaves, err := e.store.Leaves(e.ctx, "acme", 0, size)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i, l := range leaves {
		id := string(l.Data)
		if l.Index != uint64(i) || !committed[id] || seen[id] {
			t.Fatalf("leaf %d (index %d) holds %q: not a committed update, or twice", i, l.Index, id)
		}
		seen[id] = true
		if r := e.record("acme", id); r.LogIndex != l.Index {
			t.Errorf("record %s has log index %d, its leaf is %d", id, r.LogIndex, l.Index)
		}
	}
	mem, n, root, err := tlog.Rebuild(func(yield func(uint64, []byte) bool) {
		for _, l := range leaves {
			if !yield(l.Index, l.Data) {
				return
			}
		}
	}, nil)
	if err != nil || n != size {
		t.Fatalf("rebuild: %d leaves, %v", n, err)
	}
	stored, err := tlog.RootHash(e.ctx, custody.LogOf(e.store, "acme"), size)
	if err != nil || !bytes.Equal(stored, root) {
		t.Errorf("stored root %x, %v; recomputed %x", stored, err, root)
	}
	for i := range size {
		id := compact.NewNodeID(0, i)
		got, err := e.store.Nodes(e.ctx, "acme", []compact.NodeID{id})
		want, _ := mem.Nodes(e.ctx, []compact.NodeID{id})
		if err != nil || !bytes.Equal(got[0], want[0]) {
			t.Errorf("leaf node %d: %x, %v; want %x", i, got, err, want[0])
		}
	}
}
