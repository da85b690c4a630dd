package postgres

import (
	"context"
	"fmt"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/jackc/pgx/v5"
)

func pauseNanos(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	n := t.UnixNano()
	return &n
}

func pauseTime(n *int64) *time.Time {
	if n == nil {
		return nil
	}
	t := time.Unix(0, *n).UTC()
	return &t
}

// InsertPause stores a new pause.
func (t *txn) InsertPause(ctx context.Context, p *custody.Pause) error {
	return t.exec(ctx, `INSERT INTO pauses (id, tenant, writer, channel, reason, by_, created_at, until, resumed_at, resumed_by)
 VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)`, p.ID, p.Tenant, p.Writer, p.Channel, p.Reason, p.By, p.CreatedAt.UnixNano(), pauseNanos(p.Until), pauseNanos(p.ResumedAt), p.ResumedBy)
}

// ResumePause stores when and by whom a pause was resumed.
func (t *txn) ResumePause(ctx context.Context, p *custody.Pause) error {
	if t.ro {
		return errReadOnly
	}
	tag, err := t.tx.Exec(ctx, `UPDATE pauses SET resumed_at = $1, resumed_by = $2 WHERE tenant = $3 AND id = $4`, pauseNanos(p.ResumedAt), p.ResumedBy, p.Tenant, p.ID)
	if err != nil {
		return classify(err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("resuming pause %s: %d rows", p.ID, tag.RowsAffected())
	}
	return nil
}

const pauseCols = `id, tenant, writer, channel, reason, by_, created_at, until, resumed_at, resumed_by`

// Pauses lists a tenant's pauses ("" = every tenant's), oldest first.
func (t *txn) Pauses(ctx context.Context, tenant string) ([]*custody.Pause, error) {
	if !storable(tenant) {
		return nil, nil
	}
	return t.pauses(ctx, `SELECT `+pauseCols+` FROM pauses WHERE $1 = '' OR tenant = $1 ORDER BY tenant COLLATE "C", id COLLATE "C"`, tenant)
}

// OpenPauses lists the tenant's pauses that hold writes at now.
func (t *txn) OpenPauses(ctx context.Context, tenant string, now time.Time) ([]*custody.Pause, error) {
	if !storable(tenant) {
		return nil, nil
	}
	return t.pauses(ctx, `SELECT `+pauseCols+` FROM pauses WHERE tenant = $1 AND resumed_at IS NULL AND (until IS NULL OR until > $2)
 ORDER BY id COLLATE "C"`, tenant, now.UnixNano())
}

func (t *txn) pauses(ctx context.Context, q string, args ...any) ([]*custody.Pause, error) {
	rows, err := t.tx.Query(ctx, q, args...)
	if err != nil {
		return nil, classify(err)
	}
	return scanPauses(rows)
}

// scanPauses reads rows of pauseCols and closes them.
func scanPauses(rows pgx.Rows) ([]*custody.Pause, error) {
	defer rows.Close()
	var out []*custody.Pause
	for rows.Next() {
		var p custody.Pause
		var created int64
		var until, resumed *int64
		if err := rows.Scan(&p.ID, &p.Tenant, &p.Writer, &p.Channel, &p.Reason, &p.By, &created, &until, &resumed, &p.ResumedBy); err != nil {
			return nil, classify(err)
		}
		p.CreatedAt = time.Unix(0, created).UTC()
		p.Until, p.ResumedAt = pauseTime(until), pauseTime(resumed)
		out = append(out, &p)
	}
	return out, classify(rows.Err())
}
