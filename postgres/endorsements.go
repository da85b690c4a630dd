package postgres

import (
	"context"
	"strings"
	"time"

	custody "github.com/custody-mem/custody"
)

const endorsementCols = `id, tenant, session, subject, source_ref, actions, until, created_at, log_index`

func (t *txn) InsertEndorsement(ctx context.Context, e *custody.Endorsement) error {
	var until *int64
	if e.Until != nil {
		u := e.Until.UnixNano()
		until = &u
	}
	return t.exec(ctx, `INSERT INTO endorsements (`+endorsementCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9)`,
		e.ID, e.Tenant, e.Session, e.Subject, e.SourceRef, strings.Join(e.Actions, ","), until, e.CreatedAt.UnixNano(), int64(e.LogIndex))
}

func (t *txn) Endorsements(ctx context.Context, tenant, session string) ([]*custody.Endorsement, error) {
	if !storable(tenant, session) {
		return nil, nil
	}
	var out []*custody.Endorsement
	err := t.scanEndorsements(ctx, `SELECT `+endorsementCols+` FROM endorsements WHERE tenant = $1 AND session = $2 ORDER BY id`,
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
	rows, err := t.tx.Query(ctx, query, args...)
	if err != nil {
		return classify(err)
	}
	defer rows.Close()
	for rows.Next() {
		var e custody.Endorsement
		var actions string
		var until *int64
		var created, idx int64
		if err := rows.Scan(&e.ID, &e.Tenant, &e.Session, &e.Subject, &e.SourceRef, &actions, &until, &created, &idx); err != nil {
			return classify(err)
		}
		e.Actions = strings.Split(actions, ",")
		if until != nil {
			u := time.Unix(0, *until).UTC()
			e.Until = &u
		}
		e.CreatedAt, e.LogIndex = time.Unix(0, created).UTC(), uint64(idx)
		if err := fn(&e); err != nil {
			return err
		}
	}
	return classify(rows.Err())
}
