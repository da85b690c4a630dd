package postgres

import (
	"context"
	"time"

	custody "github.com/custody-mem/custody"
)

// The reads a session was shown and the records a gate decision relied on
// (custody.ImpactStore) touch neither a tenant's log nor its version
// numbers: rows of their own, keyed by session or decision, that no other
// write reads to decide. They take no tenant lock, so recording a read does
// not wait for the tenant's writers.

func (l *lockedTx) RecordReads(ctx context.Context, tenant, session string, ids []string, via custody.ReadVia, at time.Time) error {
	return l.t.RecordReads(ctx, tenant, session, ids, via, at)
}

func (l *lockedTx) ReadsOf(ctx context.Context, tenant string, ids []string, since time.Time) ([]custody.SessionRead, error) {
	return l.t.ReadsOf(ctx, tenant, ids, since)
}

func (l *lockedTx) PruneReads(ctx context.Context, before time.Time) (int64, error) {
	return l.t.PruneReads(ctx, before)
}

func (l *lockedTx) InsertGateRefs(ctx context.Context, refs []custody.GateRef) error {
	return l.t.InsertGateRefs(ctx, refs)
}

func (l *lockedTx) GateRefsOf(ctx context.Context, tenant string, ids []string) ([]custody.GateRef, error) {
	return l.t.GateRefsOf(ctx, tenant, ids)
}
