package storetest

import (
	"cmp"
	"slices"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
)

// The store's read rows and gate references, through the Tx: a second
// read of a record by a session updates its row (count, last time, vias)
// instead of adding one; ReadsOf sees only the tenant's rows of the ids
// asked for, read since the time given; PruneReads deletes exactly the
// rows last read before its time, of every tenant; GateRefsOf returns the
// references of the ids asked for, of the tenant only.
func testSessionReads(t *testing.T, e *env) {
	t0 := Start
	update := func(fn func(tx custody.Tx) error) {
		t.Helper()
		if err := e.store.Update(e.ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	read := func(tenant, session string, via custody.ReadVia, at time.Time, ids ...string) {
		t.Helper()
		update(func(tx custody.Tx) error { return tx.RecordReads(e.ctx, tenant, session, ids, via, at) })
	}
	const a, b, c = "01JREAD00000000000000000AA", "01JREAD00000000000000000BB", "01JREAD00000000000000000CC"
	read("acme", "s1", custody.ReadSearch, t0, a, b, a) // a twice in one read counts once
	read("acme", "s1", custody.ReadGet, t0.Add(time.Hour), a)
	read("acme", "s2", custody.ReadList, t0.Add(2*time.Hour), a)
	read("other", "s9", custody.ReadGet, t0.Add(3*time.Hour), a, c)
	update(func(tx custody.Tx) error { return tx.RecordReads(e.ctx, "acme", "s3", nil, custody.ReadGet, t0) }) // nothing

	reads := func(tenant string, since time.Time, ids ...string) []custody.SessionRead {
		t.Helper()
		var out []custody.SessionRead
		e.view(func(tx custody.Tx) error {
			var err error
			out, err = tx.ReadsOf(e.ctx, tenant, ids, since)
			return err
		})
		slices.SortFunc(out, func(x, y custody.SessionRead) int {
			return cmp.Or(cmp.Compare(x.Record, y.Record), cmp.Compare(x.Session, y.Session))
		})
		return out
	}
	got := reads("acme", t0, a, b, c)
	want := []custody.SessionRead{
		{Tenant: "acme", Session: "s1", Record: a, Via: custody.ReadSearch | custody.ReadGet, Reads: 2, FirstAt: t0, LastAt: t0.Add(time.Hour)},
		{Tenant: "acme", Session: "s2", Record: a, Via: custody.ReadList, Reads: 1, FirstAt: t0.Add(2 * time.Hour), LastAt: t0.Add(2 * time.Hour)},
		{Tenant: "acme", Session: "s1", Record: b, Via: custody.ReadSearch, Reads: 1, FirstAt: t0, LastAt: t0},
	}
	if !slices.EqualFunc(got, want, sameRead) {
		t.Fatalf("ReadsOf(acme) =\n%+v\nwant\n%+v", got, want)
	}
	if got := reads("acme", t0.Add(90*time.Minute), a, b); len(got) != 1 || got[0].Session != "s2" {
		t.Errorf("ReadsOf since 90 minutes: %+v; want s2's read of %s only", got, a)
	}
	if got := reads("acme", t0, c); len(got) != 0 {
		t.Errorf("ReadsOf(acme, %s) = %+v; the read is another tenant's", c, got)
	}
	if got := reads("other", t0, c); len(got) != 1 || got[0].Session != "s9" {
		t.Errorf("ReadsOf(other, %s) = %+v; want s9", c, got)
	}

	var n int64
	update(func(tx custody.Tx) error {
		var err error
		n, err = tx.PruneReads(e.ctx, t0.Add(time.Hour))
		return err
	})
	if n != 1 {
		t.Errorf("PruneReads before t0+1h deleted %d rows; want 1 (s1's read of %s)", n, b)
	}
	if got := reads("acme", t0, a, b); len(got) != 2 || got[0].Record != a || got[1].Record != a {
		t.Errorf("after the prune: %+v; want the two reads of %s", got, a)
	}
	update(func(tx custody.Tx) error {
		var err error
		n, err = tx.PruneReads(e.ctx, t0.Add(4*time.Hour))
		return err
	})
	if n != 4 {
		t.Errorf("PruneReads before t0+4h deleted %d rows; want the 4 left of both tenants", n)
	}

	ref := func(tenant, record string, idx uint64, how string) custody.GateRef {
		return custody.GateRef{Tenant: tenant, Record: record, LogIndex: idx, How: how, Action: "payments.send", Decision: custody.GateDeny,
			Subject: "alice", Session: "s1", At: t0.Add(time.Duration(idx) * time.Second)}
	}
	update(func(tx custody.Tx) error {
		return tx.InsertGateRefs(e.ctx, []custody.GateRef{ref("acme", a, 7, custody.GateCited), ref("acme", b, 7, custody.GateTraced)})
	})
	update(func(tx custody.Tx) error {
		return tx.InsertGateRefs(e.ctx, []custody.GateRef{ref("other", a, 9, custody.GateCited)})
	})
	var refs []custody.GateRef
	e.view(func(tx custody.Tx) error {
		var err error
		refs, err = tx.GateRefsOf(e.ctx, "acme", []string{a, c})
		return err
	})
	if len(refs) != 1 || refs[0] != ref("acme", a, 7, custody.GateCited) {
		t.Errorf("GateRefsOf(acme, %s, %s) = %+v; want the one cited at 7", a, c, refs)
	}
}

func sameRead(x, y custody.SessionRead) bool {
	return x.Tenant == y.Tenant && x.Session == y.Session && x.Record == y.Record && x.Via == y.Via && x.Reads == y.Reads &&
		x.FirstAt.Equal(y.FirstAt) && x.LastAt.Equal(y.LastAt)
}
