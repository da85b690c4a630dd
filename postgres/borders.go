package postgres

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/transparency-dev/merkle/compact"
)

// The log borders a server committed last.
//
// Reading a tenant's border (borderQuery: the log's size and the nodes an
// append reads) was the costliest statement of a write on the server's
// side: a tenth of a millisecond, against a hundredth for the size alone.
// A log only grows, and the border of a size is fixed by the leaves below
// it, so the border this server committed last is still the border
// whenever the log's size is still the one it committed. A write that
// takes a tenant's lock therefore reads the size alone when a border is
// kept for the tenant, and the whole border only when no kept border has
// that size: another server appended, or a commit this one could not
// confirm did land.
//
// Batches of one server can wait for one another's lock: the one that
// waited reads the size the other committed, and may read it before the
// other has heard back from its COMMIT. A batch therefore says which
// borders it is committing (a flight per tenant: one at most, as it holds
// the tenant's lock), and a reader that finds that size waits for the
// commit's answer: the border is used only once the commit is confirmed.

// maxBorders bounds the tenants whose borders are kept; past it, one is
// dropped for each added.
const maxBorders = 4096

// borders holds the last committed border of each tenant.
type borders struct {
	mu      sync.Mutex
	m       map[string]keptBorder
	flights map[string]*flight
	// claims are the tenants a batch run ahead predicts from (ahead.go):
	// one at a time, so that two batches of this server never predict
	// the same state.
	claims map[string]chan struct{}
	// reads counts the borders read whole (the tests).
	reads atomic.Int64
}

// keptBorder is a log's size and the roots of the perfect subtrees
// covering [0, size). Its map is never changed once made (tenantState
// shares it).
type keptBorder struct {
	size  uint64
	nodes map[compact.NodeID][]byte
	// st is the whole state the commit left, when the batch knew it
	// (its policy and pauses too): what a batch run ahead predicts.
	st *tenantState
}

// flight is a commit under way that leaves a tenant's log at size.
type flight struct {
	size uint64
	done chan struct{}
}

// knows reports whether a border of tenant is kept or being committed:
// whether reading the size alone may do.
func (b *borders) knows(tenant string) bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	_, kept := b.m[tenant]
	return kept || b.flights[tenant] != nil
}

// at returns the border of tenant's log at size, if it is the one kept,
// after waiting for this server's commit of that size if one is under way.
func (b *borders) at(ctx context.Context, tenant string, size uint64) (keptBorder, bool) {
	if b == nil {
		return keptBorder{}, false
	}
	b.mu.Lock()
	f := b.flights[tenant]
	b.mu.Unlock()
	if f != nil && f.size == size {
		select {
		case <-f.done:
		case <-ctx.Done():
			return keptBorder{}, false
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	k, ok := b.m[tenant]
	return k, ok && k.size == size
}

// committing says that a batch holding locks is about to commit what
// states know of those tenants. The func returned ends it: ok says the
// commit was confirmed, and keeps the border of each tenant with a state
// (a locked tenant without one, whose border was not followed to the end,
// keeps none).
func (b *borders) committing(locks map[string]bool, states map[string]*tenantState) (end func(ok bool)) {
	b.mu.Lock()
	if b.flights == nil {
		b.m, b.flights = map[string]keptBorder{}, map[string]*flight{}
	}
	mine := map[string]*flight{}
	for tenant := range locks {
		if st := states[tenant]; st != nil {
			f := &flight{size: st.size, done: make(chan struct{})}
			b.flights[tenant], mine[tenant] = f, f
		}
	}
	b.mu.Unlock()
	return func(ok bool) {
		b.mu.Lock()
		defer b.mu.Unlock()
		for tenant := range locks {
			if !ok || states[tenant] == nil {
				delete(b.m, tenant)
			} else {
				st := states[tenant]
				b.keep(tenant, keptBorder{size: st.size, nodes: st.border, st: st})
			}
			if f := mine[tenant]; f != nil {
				if b.flights[tenant] == f {
					delete(b.flights, tenant)
				}
				close(f.done)
			}
		}
	}
}

// landed keeps st as tenant's state after a batch run ahead committed
// it (ok), or drops what was kept of tenant.
func (b *borders) landed(tenant string, st *tenantState, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = map[string]keptBorder{}
	}
	if ok && st != nil {
		b.keep(tenant, keptBorder{size: st.size, nodes: st.border, st: st})
	} else {
		delete(b.m, tenant)
	}
}

// claim returns the state kept of tenant for a batch run ahead, once no
// commit of this server is under way for it and no other batch has
// claimed it, and claims it until release is called; nil (and a release
// that does nothing) when no whole state is kept.
func (b *borders) claim(ctx context.Context, tenant string) (st *tenantState, release func()) {
	b.mu.Lock()
	for {
		var wait chan struct{}
		if f := b.flights[tenant]; f != nil {
			wait = f.done
		} else if c := b.claims[tenant]; c != nil {
			wait = c
		} else {
			break
		}
		b.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, func() {}
		}
		b.mu.Lock()
	}
	defer b.mu.Unlock()
	k, ok := b.m[tenant]
	if !ok || k.st == nil || !k.st.pausesKnown {
		return nil, func() {}
	}
	if b.claims == nil {
		b.claims = map[string]chan struct{}{}
	}
	c := make(chan struct{})
	b.claims[tenant] = c
	return k.st, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.claims[tenant] == c {
			delete(b.claims, tenant)
		}
		close(c)
	}
}

// forget drops every kept border: after a batch was lost (its connection,
// or its commit), what the database holds is read again, as after a
// failover to a standby that may lack the last commits.
func (b *borders) forget() {
	b.mu.Lock()
	defer b.mu.Unlock()
	clear(b.m)
}

// keep keeps k as tenant's border (under mu).
func (b *borders) keep(tenant string, k keptBorder) {
	if _, ok := b.m[tenant]; !ok && len(b.m) >= maxBorders {
		for other := range b.m {
			delete(b.m, other)
			break
		}
	}
	b.m[tenant] = k
}

// counted counts a border read whole.
func (b *borders) counted() {
	if b != nil {
		b.reads.Add(1)
	}
}
