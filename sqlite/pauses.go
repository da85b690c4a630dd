package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	custody "github.com/custody-mem/custody"
)

func pauseNanos(t *time.Time) sql.NullInt64 {
	if t == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixNano(), Valid: true}
}

func pauseTime(n sql.NullInt64) *time.Time {
	if !n.Valid {
		return nil
	}
	t := time.Unix(0, n.Int64).UTC()
	return &t
}

// InsertPause stores a new pause.
func (t *txn) InsertPause(ctx context.Context, p *custody.Pause) error {
	t.forgetPauses(p.Tenant)
	return t.exec(ctx, `INSERT INTO pauses (id, tenant, writer, channel, reason, by_, created_at, until, resumed_at, resumed_by)
 VALUES (?,?,?,?,?,?,?,?,?,?)`, p.ID, p.Tenant, p.Writer, p.Channel, p.Reason, p.By, p.CreatedAt.UnixNano(), pauseNanos(p.Until), pauseNanos(p.ResumedAt), p.ResumedBy)
}

// ResumePause stores when and by whom a pause was resumed.
func (t *txn) ResumePause(ctx context.Context, p *custody.Pause) error {
	if t.ro {
		return errReadOnly
	}
	t.forgetPauses(p.Tenant)
	res, err := t.ExecContext(ctx, `UPDATE pauses SET resumed_at = ?, resumed_by = ? WHERE tenant = ? AND id = ?`, pauseNanos(p.ResumedAt), p.ResumedBy, p.Tenant, p.ID)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("resuming pause %s: %d rows, %v", p.ID, n, err)
	}
	return nil
}

const pauseCols = `id, tenant, writer, channel, reason, by_, created_at, until, resumed_at, resumed_by`

// Pauses lists a tenant's pauses ("" = every tenant's), oldest first.
func (t *txn) Pauses(ctx context.Context, tenant string) ([]*custody.Pause, error) {
	return t.pauses(ctx, `SELECT `+pauseCols+` FROM pauses WHERE ? = '' OR tenant = ? ORDER BY tenant, id`, tenant, tenant)
}

// OpenPauses lists the tenant's pauses that hold writes at now. The
// writer keeps each tenant's pauses that are not resumed between its
// transactions (known.go), and filters them by now itself.
func (t *txn) OpenPauses(ctx context.Context, tenant string, now time.Time) ([]*custody.Pause, error) {
	if t.known == nil {
		return t.pauses(ctx, `SELECT `+pauseCols+` FROM pauses WHERE tenant = ? AND resumed_at IS NULL AND (until IS NULL OR until > ?) ORDER BY id`,
			tenant, now.UnixNano())
	}
	ps, ok := t.known.pauses[tenant]
	if !ok {
		var err error
		if ps, err = t.pauses(ctx, `SELECT `+pauseCols+` FROM pauses WHERE tenant = ? AND resumed_at IS NULL ORDER BY id`, tenant); err != nil {
			return nil, err
		}
		if t.known.pauses == nil {
			t.known.pauses = map[string][]*custody.Pause{}
		}
		t.known.pauses[tenant] = ps
	}
	var out []*custody.Pause
	for _, p := range ps {
		if p.Until == nil || p.Until.UnixNano() > now.UnixNano() {
			cp := *p
			out = append(out, &cp)
		}
	}
	return out, nil
}

// forgetPauses drops what the writer keeps of the tenant's pauses.
func (t *txn) forgetPauses(tenant string) {
	if t.known != nil {
		delete(t.known.pauses, tenant)
	}
}

func (t *txn) pauses(ctx context.Context, q string, args ...any) ([]*custody.Pause, error) {
	rows, err := t.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*custody.Pause
	for rows.Next() {
		var p custody.Pause
		var created int64
		var until, resumed sql.NullInt64
		if err := rows.Scan(&p.ID, &p.Tenant, &p.Writer, &p.Channel, &p.Reason, &p.By, &created, &until, &resumed, &p.ResumedBy); err != nil {
			return nil, err
		}
		p.CreatedAt = time.Unix(0, created).UTC()
		p.Until, p.ResumedAt = pauseTime(until), pauseTime(resumed)
		out = append(out, &p)
	}
	return out, rows.Err()
}
