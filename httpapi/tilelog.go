package httpapi

import (
	"context"
	"errors"
	"fmt"

	"github.com/custody-mem/custody"
	"github.com/custody-mem/custody/tiles"
	"github.com/transparency-dev/merkle/compact"
)

// tileLog is the tiles.Log of the server's store.
//
// Today the store keeps one tree whose leaves every tenant shares, under
// one origin, so each tenant's tiles are those of that tree, whatever the
// tenant, and an entry bundle that holds another tenant's leaf is
// refused (404). When the store keeps one tree per tenant, this file is
// the one to change: each method reads the tree of tenant.
func (s *Server) tileLog() tiles.Log { return storeTileLog{s.svc.Store()} }

type storeTileLog struct{ st custody.Store }

func (l storeTileLog) Size(ctx context.Context, tenant string) (uint64, error) {
	return l.st.LogSize(ctx)
}

func (l storeTileLog) Nodes(ctx context.Context, tenant string, ids []compact.NodeID) ([][]byte, error) {
	return l.st.Nodes(ctx, ids)
}

func (l storeTileLog) Leaves(ctx context.Context, tenant string, start, end uint64) ([][]byte, error) {
	leaves, err := l.st.Leaves(ctx, start, end)
	if err != nil {
		return nil, err
	}
	out := make([][]byte, len(leaves))
	for i, leaf := range leaves {
		if leaf.Tenant != tenant {
			return nil, fmt.Errorf("%w: leaf %d belongs to another tenant", tiles.ErrNotFound, leaf.Index)
		}
		out[i] = leaf.Data
	}
	return out, nil
}

func (l storeTileLog) Checkpoint(ctx context.Context, tenant string) ([]byte, error) {
	_, note, err := l.st.LatestCheckpoint(ctx)
	if errors.Is(err, custody.ErrNotFound) {
		return nil, fmt.Errorf("%w: no checkpoint was signed yet", tiles.ErrNotFound)
	}
	return note, err
}
