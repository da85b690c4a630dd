package postgres_test

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
	"pgregory.net/rapid"
)

// A batch of any mix of writes that succeed, fail at once, fail after a
// statement of their own, or fail on a held-back insert (a record id
// taken: the failure surfaces in the next write's round trip) commits
// exactly the writes that succeed: each has its error or none as it
// would alone, the tenant's log holds their leaves in batch order, and
// its stored nodes give the root of those leaves.
func TestBatchOfMixedWrites(t *testing.T) {
	ctx := t.Context()
	st := openDSN(t, newDatabase(t))
	errOwn := errors.New("this write's own failure")
	var cases atomic.Int64
	record := func(tenant, id string) *custody.Record {
		return &custody.Record{ID: id, Tenant: tenant, Owner: "alice", Namespace: "n", Class: custody.ClassFact,
			Body: "body of " + id, Channel: custody.ChannelUser, Writer: tenant + "/alice", Authority: custody.AuthorityUser,
			Audience: custody.AudienceOwner, State: custody.StateAdmitted, CreatedAt: time.Now(), Version: 1, Parents: []custody.Edge{}}
	}
	const (
		ok = iota
		okAfterRead
		failAtOnce
		failAfterRead
		failHeldBack
		kinds
	)
	rapid.Check(t, func(rt *rapid.T) {
		n := cases.Add(1)
		tenant := fmt.Sprintf("t%d", n)
		taken := fmt.Sprintf("01JB%022d", n)
		if err := st.Update(ctx, func(tx custody.Tx) error { return tx.InsertRecord(ctx, record(tenant, taken)) }); err != nil {
			rt.Fatal(err)
		}
		plan := rapid.SliceOfN(rapid.IntRange(0, kinds-1), 1, 10).Draw(rt, "plan")
		fns := make([]func(custody.Tx) error, len(plan))
		var want []string
		for i, kind := range plan {
			leaf := fmt.Sprintf("w%d", i)
			if kind == ok || kind == okAfterRead {
				want = append(want, leaf)
			}
			fns[i] = func(tx custody.Tx) error {
				if kind == failAtOnce {
					return errOwn
				}
				if _, err := tx.AppendLeaf(ctx, tenant, []byte(leaf)); err != nil {
					return err
				}
				switch kind {
				case okAfterRead, failAfterRead:
					if _, err := tx.LogSize(ctx, tenant); err != nil {
						return err
					}
				case failHeldBack:
					return tx.InsertRecord(ctx, record(tenant, taken))
				}
				if kind == failAfterRead {
					return errOwn
				}
				return nil
			}
		}
		errs := st.UpdateEach(ctx, fns...)
		for i, kind := range plan {
			switch {
			case kind == failAtOnce || kind == failAfterRead:
				if !errors.Is(errs[i], errOwn) {
					rt.Fatalf("write %d (kind %d): %v, want its own error", i, kind, errs[i])
				}
			case kind == failHeldBack:
				if errs[i] == nil || errors.Is(errs[i], errOwn) || errors.Is(errs[i], custody.ErrUnavailable) {
					rt.Fatalf("write %d inserting a taken id: %v, want the insert's error", i, errs[i])
				}
			case errs[i] != nil:
				rt.Fatalf("write %d (kind %d) of %v: %v", i, kind, plan, errs[i])
			}
		}
		got, err := st.Leaves(ctx, tenant, 0, uint64(len(plan))+1)
		if err != nil {
			rt.Fatal(err)
		}
		var leaves []string
		for _, l := range got {
			leaves = append(leaves, string(l.Data))
		}
		if strings.Join(leaves, ",") != strings.Join(want, ",") {
			rt.Fatalf("plan %v: log %v, want %v", plan, leaves, want)
		}
		checkTenantLog(t, st, tenant, want)
	})
}
