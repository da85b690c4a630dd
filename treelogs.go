package custody

import (
	"context"
	"errors"
	"fmt"

	"github.com/transparency-dev/merkle/compact"
)

// TreeLogs reads the store's Merkle logs one log at a time, for the
// transports that serve them to outside verifiers: the C2SP tlog-tiles
// of package tiles (by tenant) and the witness pusher of package witness
// (by origin).
//
// Today the store keeps one tree, whose leaves every tenant shares, under
// one origin (Options.LogOrigin): each tenant's log is that tree, and
// Leaves refuses a range that holds another tenant's leaf (ErrNotFound).
// When the store keeps one tree per tenant, this file is the one to
// change: each method reads the tree of its tenant (or origin).
type TreeLogs struct{ s *Service }

// TreeLogs returns the reader of the service's logs.
func (s *Service) TreeLogs() TreeLogs { return TreeLogs{s} }

// Size is the number of leaves of tenant's log.
func (l TreeLogs) Size(ctx context.Context, tenant string) (uint64, error) {
	return l.s.store.LogSize(ctx)
}

// Nodes reads stored node hashes of tenant's tree.
func (l TreeLogs) Nodes(ctx context.Context, tenant string, ids []compact.NodeID) ([][]byte, error) {
	return l.s.store.Nodes(ctx, ids)
}

// Leaves returns the leaves [start, end) of tenant's log.
func (l TreeLogs) Leaves(ctx context.Context, tenant string, start, end uint64) ([][]byte, error) {
	leaves, err := l.s.store.Leaves(ctx, start, end)
	if err != nil {
		return nil, err
	}
	out := make([][]byte, len(leaves))
	for i, leaf := range leaves {
		if leaf.Tenant != tenant {
			return nil, fmt.Errorf("%w: leaf %d belongs to another tenant's log", ErrNotFound, leaf.Index)
		}
		out[i] = leaf.Data
	}
	return out, nil
}

// Checkpoint is the latest signed checkpoint of tenant's log, without
// cosignatures; ErrNotFound if none was signed yet.
func (l TreeLogs) Checkpoint(ctx context.Context, tenant string) ([]byte, error) {
	_, note, err := l.s.store.LatestCheckpoint(ctx)
	return note, err
}

// Checkpoints is the latest signed checkpoint of every log.
func (l TreeLogs) Checkpoints(ctx context.Context) ([][]byte, error) {
	_, note, err := l.s.store.LatestCheckpoint(ctx)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return [][]byte{note}, nil
}

// ConsistencyProof proves that the tree of size from of the log of origin
// is a prefix of its tree of size to.
func (l TreeLogs) ConsistencyProof(ctx context.Context, origin string, from, to uint64) ([][]byte, error) {
	if origin != l.s.opts.LogOrigin {
		return nil, fmt.Errorf("%w: no log has origin %q", ErrNotFound, origin)
	}
	return l.s.ConsistencyProof(ctx, from, to)
}

// Origin is the origin of tenant's log.
func (l TreeLogs) Origin(tenant string) string { return l.s.opts.LogOrigin }
