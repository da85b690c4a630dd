package postgres

import (
	"context"
	"slices"
	"time"

	custody "github.com/custody-mem/custody"
)

// RecordReads notes what a session's read returned (migration 006:
// session_reads), in one statement.
func (t *txn) RecordReads(ctx context.Context, tenant, session string, ids []string, via custody.ReadVia, at time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	return t.exec(ctx, `INSERT INTO session_reads AS s (tenant, record, session, via, reads, first_at, last_at)
 SELECT $1, id, $2, $3, 1, $4, $4 FROM unnest($5::text[]) AS id
 ON CONFLICT (tenant, record, session) DO UPDATE SET via = s.via | excluded.via, reads = s.reads + 1, last_at = greatest(s.last_at, excluded.last_at)`,
		tenant, session, int(via), at.UnixNano(), slices.Compact(slices.Sorted(slices.Values(ids))))
}

// ReadsOf lists the read rows of records ids last read at or after since.
func (t *txn) ReadsOf(ctx context.Context, tenant string, ids []string, since time.Time) ([]custody.SessionRead, error) {
	if !storable(tenant) || !storable(ids...) {
		return nil, nil
	}
	rows, err := t.tx.Query(ctx, `SELECT record, session, via, reads, first_at, last_at FROM session_reads
 WHERE tenant = $1 AND record = ANY($2::text[]) AND last_at >= $3`, tenant, ids, since.UnixNano())
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	var out []custody.SessionRead
	for rows.Next() {
		rd := custody.SessionRead{Tenant: tenant}
		var via int32
		var first, last int64
		if err := rows.Scan(&rd.Record, &rd.Session, &via, &rd.Reads, &first, &last); err != nil {
			return nil, classify(err)
		}
		rd.Via, rd.FirstAt, rd.LastAt = custody.ReadVia(via), time.Unix(0, first).UTC(), time.Unix(0, last).UTC()
		out = append(out, rd)
	}
	return out, classify(rows.Err())
}

// PruneReads deletes the rows last read before before.
func (t *txn) PruneReads(ctx context.Context, before time.Time) (int64, error) {
	if t.ro {
		return 0, errReadOnly
	}
	tag, err := t.tx.Exec(ctx, `DELETE FROM session_reads WHERE last_at < $1`, before.UnixNano())
	if err != nil {
		return 0, classify(err)
	}
	return tag.RowsAffected(), nil
}

// InsertGateRefs stores what a gate decision relied on (migration 006:
// gate_refs).
func (t *txn) InsertGateRefs(ctx context.Context, refs []custody.GateRef) error {
	for _, g := range refs {
		if err := t.exec(ctx, `INSERT INTO gate_refs (tenant, record, log_index, how, action, decision, subject, session, at)
 VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9)`, g.Tenant, g.Record, int64(g.LogIndex), g.How, g.Action, g.Decision, g.Subject, g.Session, g.At.UnixNano()); err != nil {
			return err
		}
	}
	return nil
}

// GateRefsOf lists the gate references of records ids.
func (t *txn) GateRefsOf(ctx context.Context, tenant string, ids []string) ([]custody.GateRef, error) {
	if !storable(tenant) || !storable(ids...) {
		return nil, nil
	}
	rows, err := t.tx.Query(ctx, `SELECT record, log_index, how, action, decision, subject, session, at FROM gate_refs
 WHERE tenant = $1 AND record = ANY($2::text[])`, tenant, ids)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	var out []custody.GateRef
	for rows.Next() {
		g := custody.GateRef{Tenant: tenant}
		var idx, at int64
		if err := rows.Scan(&g.Record, &idx, &g.How, &g.Action, &g.Decision, &g.Subject, &g.Session, &at); err != nil {
			return nil, classify(err)
		}
		g.LogIndex, g.At = uint64(idx), time.Unix(0, at).UTC()
		out = append(out, g)
	}
	return out, classify(rows.Err())
}
