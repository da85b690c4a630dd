package sqlite

import (
	"context"
	"slices"
	"time"

	custody "github.com/custody-mem/custody"
)

// RecordReads notes what a session's read returned (schema.sql:
// session_reads).
func (t *txn) RecordReads(ctx context.Context, tenant, session string, ids []string, via custody.ReadVia, at time.Time) error {
	for _, id := range slices.Compact(slices.Sorted(slices.Values(ids))) {
		if err := t.exec(ctx, `INSERT INTO session_reads (tenant, record, session, via, reads, first_at, last_at) VALUES (?,?,?,?,1,?,?)
 ON CONFLICT (tenant, record, session) DO UPDATE SET via = via | excluded.via, reads = reads + 1, last_at = max(last_at, excluded.last_at)`,
			tenant, id, session, int(via), at.UnixNano(), at.UnixNano()); err != nil {
			return err
		}
	}
	return nil
}

// ReadsOf lists the read rows of records ids last read at or after since.
func (t *txn) ReadsOf(ctx context.Context, tenant string, ids []string, since time.Time) ([]custody.SessionRead, error) {
	var out []custody.SessionRead
	for _, id := range ids {
		rows, err := t.QueryContext(ctx, `SELECT session, via, reads, first_at, last_at FROM session_reads
 WHERE tenant = ? AND record = ? AND last_at >= ? ORDER BY session`, tenant, id, since.UnixNano())
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			rd := custody.SessionRead{Tenant: tenant, Record: id}
			var first, last int64
			if err := rows.Scan(&rd.Session, &rd.Via, &rd.Reads, &first, &last); err != nil {
				rows.Close()
				return nil, err
			}
			rd.FirstAt, rd.LastAt = time.Unix(0, first).UTC(), time.Unix(0, last).UTC()
			out = append(out, rd)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// PruneReads deletes the rows last read before before.
func (t *txn) PruneReads(ctx context.Context, before time.Time) (int64, error) {
	if t.ro {
		return 0, errReadOnly
	}
	res, err := t.ExecContext(ctx, `DELETE FROM session_reads WHERE last_at < ?`, before.UnixNano())
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// InsertGateRefs stores what a gate decision relied on (schema.sql:
// gate_refs).
func (t *txn) InsertGateRefs(ctx context.Context, refs []custody.GateRef) error {
	for _, g := range refs {
		if err := t.exec(ctx, `INSERT INTO gate_refs (tenant, record, log_index, how, action, decision, subject, session, at)
 VALUES (?,?,?,?,?,?,?,?,?)`, g.Tenant, g.Record, int64(g.LogIndex), g.How, g.Action, g.Decision, g.Subject, g.Session, g.At.UnixNano()); err != nil {
			return err
		}
	}
	return nil
}

// GateRefsOf lists the gate references of records ids.
func (t *txn) GateRefsOf(ctx context.Context, tenant string, ids []string) ([]custody.GateRef, error) {
	var out []custody.GateRef
	for _, id := range ids {
		rows, err := t.QueryContext(ctx, `SELECT log_index, how, action, decision, subject, session, at FROM gate_refs
 WHERE tenant = ? AND record = ? ORDER BY log_index`, tenant, id)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			g := custody.GateRef{Tenant: tenant, Record: id}
			var idx, at int64
			if err := rows.Scan(&idx, &g.How, &g.Action, &g.Decision, &g.Subject, &g.Session, &at); err != nil {
				rows.Close()
				return nil, err
			}
			g.LogIndex, g.At = uint64(idx), time.Unix(0, at).UTC()
			out = append(out, g)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}
