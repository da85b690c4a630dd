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
// (by origin). Each tenant's log is a tree of its own, under its own
// origin (LogOrigin). It is TenantLog (LogOf) keyed by tenant per call, as
// those packages ask for it.
type TreeLogs struct{ s *Service }

// TreeLogs returns the reader of the service's logs.
func (s *Service) TreeLogs() TreeLogs { return TreeLogs{s} }

// Size is the number of leaves of tenant's log.
func (l TreeLogs) Size(ctx context.Context, tenant string) (uint64, error) {
	return LogOf(l.s.store, tenant).Size(ctx)
}

// Nodes reads stored node hashes of tenant's tree.
func (l TreeLogs) Nodes(ctx context.Context, tenant string, ids []compact.NodeID) ([][]byte, error) {
	return LogOf(l.s.store, tenant).Nodes(ctx, ids)
}

// Leaves returns the leaves [start, end) of tenant's log.
func (l TreeLogs) Leaves(ctx context.Context, tenant string, start, end uint64) ([][]byte, error) {
	leaves, err := LogOf(l.s.store, tenant).Leaves(ctx, start, end)
	if err != nil {
		return nil, err
	}
	out := make([][]byte, len(leaves))
	for i, leaf := range leaves {
		out[i] = leaf.Data
	}
	return out, nil
}

// Checkpoint is the latest signed checkpoint of tenant's log, without
// cosignatures; ErrNotFound if none was signed yet.
func (l TreeLogs) Checkpoint(ctx context.Context, tenant string) ([]byte, error) {
	_, note, err := LogOf(l.s.store, tenant).LatestCheckpoint(ctx)
	return note, err
}

// Checkpoints is the latest signed checkpoint of every tenant's log.
func (l TreeLogs) Checkpoints(ctx context.Context) ([][]byte, error) {
	tenants, err := l.s.store.LogTenants(ctx)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for _, t := range tenants {
		note, err := l.Checkpoint(ctx, t)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, note)
	}
	return out, nil
}

// ConsistencyProof proves that the tree of size from of the log of origin
// is a prefix of its tree of size to.
func (l TreeLogs) ConsistencyProof(ctx context.Context, origin string, from, to uint64) ([][]byte, error) {
	tenant, ok := l.s.tenantOf(origin)
	if !ok {
		return nil, fmt.Errorf("%w: no log has origin %q", ErrNotFound, origin)
	}
	return l.s.ConsistencyProof(ctx, tenant, from, to)
}

// Origin is the origin of tenant's log.
func (l TreeLogs) Origin(tenant string) string { return l.s.LogOrigin(tenant) }
