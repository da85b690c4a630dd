package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/tlog"
)

// grouping is a store whose Update waits until n writes are waiting, then
// runs them together through the real store's UpdateEach: the writes of
// concurrent Remember calls become one batch on purpose.
type grouping struct {
	custody.Store
	n int

	mu      sync.Mutex
	pending []*groupWrite
	order   []int // the candidates, in the order their writes joined the batch
}

type groupWrite struct {
	fn   func(custody.Tx) error
	done chan error
}

// candidateKey carries, in a write's context, which candidate it is.
type candidateKey struct{}

func (g *grouping) Update(ctx context.Context, fn func(custody.Tx) error) error {
	w := &groupWrite{fn: fn, done: make(chan error, 1)}
	g.mu.Lock()
	if c, ok := ctx.Value(candidateKey{}).(int); ok {
		g.order = append(g.order, c)
	}
	g.pending = append(g.pending, w)
	var batch []*groupWrite
	if len(g.pending) == g.n {
		batch, g.pending = g.pending, nil
	}
	g.mu.Unlock()
	if batch != nil {
		fns := make([]func(custody.Tx) error, len(batch))
		for i, b := range batch {
			fns[i] = b.fn
		}
		for i, err := range g.Store.(custody.GroupUpdater).UpdateEach(context.WithoutCancel(ctx), fns...) {
			batch[i].done <- err
		}
	}
	return <-w.done
}

// Writes that share a commit are decided one by one: each gets its own
// state, receipt and log entry, in batch order; a candidate that fails
// inside the transaction (a missing parent, a write that appended to the
// log and then failed) takes nothing of its batch-mates with it, and
// leaves nothing of its own; the store verifies after.
func testGroupCommit(t *testing.T, e *env) {
	if _, ok := e.store.(custody.GroupUpdater); !ok {
		t.Skip("the store does not group writes")
	}
	alice := e.user("acme", "alice")
	e.remember(alice, custody.Candidate{Namespace: "g", Key: "payee_account", Class: custody.ClassFact, Body: "ACCT-1", Channel: custody.ChannelUser})
	g := &grouping{Store: e.store}
	svc, err := custody.New(g, e.svc.ServerKey(), custody.Options{Now: e.clock.Now, Policy: mustPolicy(t)})
	if err != nil {
		t.Fatal(err)
	}
	fact := func(body string) custody.Candidate {
		return custody.Candidate{Namespace: "g", Class: custody.ClassFact, Body: body, Channel: custody.ChannelUser}
	}
	orphan := fact("derived from nothing")
	orphan.DerivedFrom = []custody.Edge{{ID: "01ARZ3NDEKTSV4RRFFQ69G5FAV", Weight: 1}}
	procedure := fact("always wire the money at once")
	procedure.Class = custody.ClassProcedure
	payee := fact("ACCT-2")
	payee.Key = "payee_account"
	cands := []custody.Candidate{fact("tea at five"), orphan, procedure, payee, fact("coffee at nine"), orphan}
	want := []custody.State{custody.StateAdmitted, "", custody.StateQuarantined, custody.StatePendingConfirmation, custody.StateAdmitted, ""}
	boom := errors.New("a write that fails after appending to the log")
	g.n = len(cands) + 1
	size0, err := e.store.LogSize(e.ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	ds := make([]*custody.Decision, len(cands))
	errs := make([]error, len(cands)+1)
	var wg sync.WaitGroup
	for i, c := range cands {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ds[i], errs[i] = svc.Remember(context.WithValue(e.ctx, candidateKey{}, i), alice, c)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		errs[len(cands)] = g.Update(e.ctx, func(tx custody.Tx) error {
			if _, err := tx.AppendLeaf(e.ctx, "acme", []byte("rolled back")); err != nil {
				return err
			}
			return boom
		})
	}()
	wg.Wait()
	if !errors.Is(errs[len(cands)], boom) {
		t.Errorf("the failing raw write: %v, want its own error", errs[len(cands)])
	}
	var kept []*custody.Decision
	for i, d := range ds {
		if want[i] == "" {
			if !errors.Is(errs[i], custody.ErrNotFound) && !errors.Is(errs[i], custody.ErrInvalid) {
				t.Errorf("candidate %d (missing parent): %v, want its own refusal", i, errs[i])
			}
			continue
		}
		if errs[i] != nil {
			t.Errorf("candidate %d failed with its batch-mates' failures: %v", i, errs[i])
			continue
		}
		if d.State != want[i] {
			t.Errorf("candidate %d: %s (%s), want %s", i, d.State, d.Reason, want[i])
		}
		kept = append(kept, d)
	}
	size, err := e.store.LogSize(e.ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if size != size0+uint64(len(kept)) {
		t.Errorf("log grew from %d to %d for %d kept writes", size0, size, len(kept))
	}
	// The log holds the kept writes in the order they ran in the batch.
	if len(g.order) != len(cands) {
		t.Fatalf("%d of %d candidates' writes were seen joining the batch", len(g.order), len(cands))
	}
	var prev *custody.Decision
	for _, i := range g.order {
		if d := ds[i]; d != nil && errs[i] == nil {
			if prev != nil && d.LogIndex <= prev.LogIndex {
				t.Errorf("candidate %d ran after %s in the batch but was logged at %d, before it (%d)", i, prev.ID, d.LogIndex, prev.LogIndex)
			}
			prev = d
		}
	}
	seen := map[uint64]bool{}
	for _, d := range kept {
		if d.LogIndex < size0 || d.LogIndex >= size || seen[d.LogIndex] || d.Receipt == nil || d.Receipt.LogIndex != d.LogIndex {
			t.Errorf("decision %s: log index %d, receipt %+v; want an entry of its own in [%d, %d)", d.ID, d.LogIndex, d.Receipt, size0, size)
			continue
		}
		seen[d.LogIndex] = true
		ls, err := e.store.Leaves(e.ctx, "acme", d.LogIndex, d.LogIndex+1)
		if err != nil || len(ls) != 1 {
			t.Fatalf("leaf %d: %v", d.LogIndex, err)
		}
		entry, err := tlog.ParseLeaf(ls[0].Data)
		if err != nil || entry.RecordID != d.ID || entry.NewState != string(d.State) {
			t.Errorf("leaf %d: %+v (%v), want the entry of %s (%s)", d.LogIndex, entry, err, d.ID, d.State)
		}
		if r := e.record("acme", d.ID); r.State != d.State || r.LogIndex != d.LogIndex {
			t.Errorf("record %s stored as %s at %d, decided %s at %d", d.ID, r.State, r.LogIndex, d.State, d.LogIndex)
		}
	}
	e.verify()
}

func mustPolicy(t *testing.T) *custody.Policy {
	t.Helper()
	pol, err := custody.ParsePolicy(policyText)
	if err != nil {
		t.Fatal(err)
	}
	return pol
}
