package custody

import (
	"context"
	"sync"
	"sync/atomic"
)

// A batch is decided ahead while it is applied: one goroutine prepares
// its candidates in order (prepare.go) while the writer applies them, so
// that the policy, the digests and the signatures of a batch run beside
// the writer rather than before it. A candidate the writer reaches before
// its preparation has begun is decided in the writer, as any candidate
// that was not prepared; one being prepared it waits for (less than
// deciding it would take). The preparer reads copies of the records, made
// before either starts, and the writer alone changes the records.
type batchAhead struct {
	snaps []Record // the records as they were before the transaction
	state []atomic.Int32
	preps []*prepared
	ready []chan struct{} // closed when preps[i] is set
	stop  atomic.Bool
	done  sync.WaitGroup
}

// The states of a candidate's preparation.
const (
	aheadWaiting int32 = iota // not begun
	aheadBusy                 // being prepared
	aheadReady                // prepared (preps holds it, or nil if it could not be)
	aheadTaken                // reached by the writer first: never prepared
)

// prepareAhead starts preparing recs of c in order.
func (s *Service) prepareAhead(ctx context.Context, c *Caller, recs []*Record) *batchAhead {
	a := &batchAhead{snaps: make([]Record, len(recs)), state: make([]atomic.Int32, len(recs)), preps: make([]*prepared, len(recs)),
		ready: make([]chan struct{}, len(recs))}
	for i, r := range recs {
		a.snaps[i] = *r
		a.ready[i] = make(chan struct{})
	}
	a.done.Add(1)
	go func() {
		defer a.done.Done()
		for i := range a.snaps {
			if a.stop.Load() {
				return
			}
			if !a.state[i].CompareAndSwap(aheadWaiting, aheadBusy) {
				continue
			}
			a.preps[i] = s.prepare(ctx, c, &a.snaps[i])
			a.state[i].Store(aheadReady)
			close(a.ready[i])
		}
	}()
	return a
}

// take is candidate i's prepared decision, or nil if it has none.
func (a *batchAhead) take(i int) *prepared {
	if a.state[i].CompareAndSwap(aheadWaiting, aheadTaken) || a.state[i].Load() == aheadTaken {
		return nil
	}
	<-a.ready[i] // busy or ready: it ends with the one preparation begun
	return a.preps[i]
}

// end stops the preparation and waits for it to end.
func (a *batchAhead) end() {
	a.stop.Store(true)
	a.done.Wait()
}
