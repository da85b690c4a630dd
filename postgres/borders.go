package postgres

import (
	"sync"
	"sync/atomic"

	"github.com/transparency-dev/merkle/compact"
)

// The log borders a server last committed.
//
// Reading a tenant's border (borderQuery: the log's size and the nodes an
// append reads) was the costliest statement of a write on the server's
// side: a tenth of a millisecond, against a hundredth for the size alone.
// A log only grows, and the border of a size is fixed by the leaves below
// it, so the border this server committed last is still the border
// whenever the log's size is still the one it committed. A write that
// takes a tenant's lock therefore reads the size alone when a border is
// kept for the tenant, and the whole border only when the size differs:
// another server appended, or a commit this one could not confirm did
// land.

// maxBorders bounds the tenants whose borders are kept; past it, one is
// dropped for each added.
const maxBorders = 4096

// borders holds the last committed border of each tenant.
type borders struct {
	mu sync.Mutex
	m  map[string]keptBorder
	// reads counts the borders read whole (the tests).
	reads atomic.Int64
}

// keptBorder is a log's size and the roots of the perfect subtrees covering
// [0, size). Its map is never changed once made (tenantState shares it).
type keptBorder struct {
	size  uint64
	nodes map[compact.NodeID][]byte
}

// get returns tenant's kept border, if any.
func (b *borders) get(tenant string) (keptBorder, bool) {
	if b == nil {
		return keptBorder{}, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	k, ok := b.m[tenant]
	return k, ok
}

// committed keeps what a batch that committed knew of the tenants it
// locked: the border of each tenant with a state, and none for a locked
// tenant without one (its border was not followed to the end).
func (b *borders) committed(locks map[string]bool, states map[string]*tenantState) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = map[string]keptBorder{}
	}
	for tenant := range locks {
		st := states[tenant]
		if st == nil {
			delete(b.m, tenant)
			continue
		}
		if _, ok := b.m[tenant]; !ok && len(b.m) >= maxBorders {
			for other := range b.m {
				delete(b.m, other)
				break
			}
		}
		b.m[tenant] = keptBorder{size: st.size, nodes: st.border}
	}
}

// counted counts a border read whole.
func (b *borders) counted() {
	if b != nil {
		b.reads.Add(1)
	}
}
