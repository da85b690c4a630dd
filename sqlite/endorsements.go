package sqlite

import (
	"context"
	"database/sql"
	"strings"
	"time"

	custody "github.com/custody-mem/custody"
)

const endorsementCols = `id, tenant, session, subject, source_ref, actions, until, created_at, log_index`

func (t *txn) InsertEndorsement(ctx context.Context, e *custody.Endorsement) error {
	var until any
	if e.Until != nil {
		until = e.Until.UnixNano()
	}
	return t.exec(ctx, `INSERT INTO endorsements (`+endorsementCols+`) VALUES (?,?,?,?,?,?,?,?,?)`,
		e.ID, e.Tenant, e.Session, e.Subject, e.SourceRef, strings.Join(e.Actions, ","), until, e.CreatedAt.UnixNano(), int64(e.LogIndex))
}

func (t *txn) Endorsements(ctx context.Context, tenant, session string) ([]*custody.Endorsement, error) {
	var out []*custody.Endorsement
	err := t.scanEndorsements(ctx, `SELECT `+endorsementCols+` FROM endorsements WHERE tenant = ? AND session = ? ORDER BY id`,
		[]any{tenant, session}, func(e *custody.Endorsement) error {
			out = append(out, e)
			return nil
		})
	return out, err
}

func (t *txn) ScanEndorsements(ctx context.Context, fn func(*custody.Endorsement) error) error {
	return t.scanEndorsements(ctx, `SELECT `+endorsementCols+` FROM endorsements ORDER BY tenant, id`, nil, fn)
}

func (t *txn) scanEndorsements(ctx context.Context, query string, args []any, fn func(*custody.Endorsement) error) error {
	rows, err := t.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var e custody.Endorsement
		var actions string
		var until sql.NullInt64
		var created, idx int64
		if err := rows.Scan(&e.ID, &e.Tenant, &e.Session, &e.Subject, &e.SourceRef, &actions, &until, &created, &idx); err != nil {
			return err
		}
		e.Actions = strings.Split(actions, ",")
		if until.Valid {
			u := time.Unix(0, until.Int64).UTC()
			e.Until = &u
		}
		e.CreatedAt, e.LogIndex = time.Unix(0, created).UTC(), uint64(idx)
		if err := fn(&e); err != nil {
			return err
		}
	}
	return rows.Err()
}
