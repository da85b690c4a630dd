package custody

import (
	"bytes"
	"context"
	"sync"

	"github.com/custody-mem/custody/tlog"
	"github.com/transparency-dev/merkle/compact"
)

// Every proof of a tenant's log reads, besides the nodes near its leaf,
// the roots of the large subtrees its path passes: the same few nodes for
// every proof of a tree of about the same size. A node of the tree is the
// hash of a complete subtree and never changes once stored (the log only
// grows), so the service keeps the nodes of the upper levels it has read,
// and a proof reads only the lower ones from the store. At a million
// leaves that is 5 of about 20 nodes a proof. Verify, tiles and the
// writer read the store itself, never this copy.
const (
	// proofCacheLevel is the lowest level kept: nodes of 32 leaves and
	// up, of which a tree of n leaves has about n/16.
	proofCacheLevel = 5
	// proofCacheNodes bounds the nodes kept, over all tenants (about
	// 130 bytes each, 17 MB in all): the upper levels of 2 million
	// leaves. Once it is full, further nodes are read, not kept.
	proofCacheNodes = 1 << 17
)

// proofNodes is the service's copy of upper-level tree nodes, by tenant
// and node, and of the largest size of each tenant's log it has read; the
// zero value is empty and ready.
type proofNodes struct {
	mu    sync.RWMutex
	nodes map[proofNodeKey][]byte
	// sizes: a proof of a tree no larger than the log was once needs no
	// read of the log's size to know the tree exists (a fifth of a proof
	// at a million leaves).
	sizes map[string]uint64
}

type proofNodeKey struct {
	tenant string
	id     compact.NodeID
}

// reader is tenant's log as a proof reads its nodes: the kept ones from
// the copy, the others from r, in one read, keeping the upper ones read.
func (p *proofNodes) reader(r tlog.NodeReader, tenant string) tlog.NodeReader {
	return cachedNodes{p: p, r: r, tenant: tenant}
}

type cachedNodes struct {
	p      *proofNodes
	r      tlog.NodeReader
	tenant string
}

func (c cachedNodes) Nodes(ctx context.Context, ids []compact.NodeID) ([][]byte, error) {
	out := make([][]byte, len(ids))
	var missing []compact.NodeID
	var at []int
	c.p.mu.RLock()
	for i, id := range ids {
		if h, ok := c.p.nodes[proofNodeKey{c.tenant, id}]; ok {
			out[i] = bytes.Clone(h)
			continue
		}
		missing = append(missing, id)
		at = append(at, i)
	}
	c.p.mu.RUnlock()
	if len(missing) == 0 {
		return out, nil
	}
	read, err := c.r.Nodes(ctx, missing)
	if err != nil {
		return nil, err
	}
	keep := false
	for j, i := range at {
		out[i] = read[j]
		keep = keep || missing[j].Level >= proofCacheLevel
	}
	if keep {
		c.p.keep(c.tenant, missing, read)
	}
	return out, nil
}

// keep adds the upper-level nodes of ids (hashes as read) while there is
// room.
func (p *proofNodes) keep(tenant string, ids []compact.NodeID, hashes [][]byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.nodes == nil {
		p.nodes = map[proofNodeKey][]byte{}
	}
	for i, id := range ids {
		if id.Level >= proofCacheLevel && len(hashes[i]) == tlog.HashSize && len(p.nodes) < proofCacheNodes {
			p.nodes[proofNodeKey{tenant, id}] = bytes.Clone(hashes[i])
		}
	}
}

// holds reports whether tenant's log was once seen with at least size
// leaves, so that it still has them.
func (p *proofNodes) holds(tenant string, size uint64) bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return size <= p.sizes[tenant]
}

// saw notes that tenant's log has size leaves.
func (p *proofNodes) saw(tenant string, size uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sizes == nil {
		p.sizes = map[string]uint64{}
	}
	p.sizes[tenant] = max(p.sizes[tenant], size)
}
