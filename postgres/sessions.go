package postgres

import (
	"context"
	"time"

	custody "github.com/custody-mem/custody"
)

// Sessions and what was observed in them: a session's floor is the
// lowest authority observed (the session's taint), read with it.

func (t *txn) InsertSession(ctx context.Context, s *custody.Session) error {
	return t.exec(ctx, `INSERT INTO sessions (id, tenant, subject, opener, created_at) VALUES ($1,$2,$3,$4,$5)`,
		s.ID, s.Tenant, s.Subject, s.Opener, s.CreatedAt.UnixNano())
}

// Session loads a session; its floor is the lowest authority observed in it
// (confirmed when nothing was observed).
func (t *txn) Session(ctx context.Context, tenant, id string) (*custody.Session, error) {
	if !storable(tenant, id) {
		return nil, custody.ErrNotFound
	}
	var s custody.Session
	var created int64
	var floor *int16
	err := t.tx.QueryRow(ctx, `SELECT s.id, s.tenant, s.subject, s.opener, s.created_at,
 (SELECT MIN(authority) FROM observations o WHERE o.tenant = s.tenant AND o.session = s.id)
 FROM sessions s WHERE s.id = $1 AND s.tenant = $2`, id, tenant).Scan(&s.ID, &s.Tenant, &s.Subject, &s.Opener, &created, &floor)
	if err != nil {
		return nil, notFound(err)
	}
	s.CreatedAt = time.Unix(0, created).UTC()
	s.Floor = custody.AuthorityConfirmed
	if floor != nil {
		s.Floor = custody.Authority(*floor)
	}
	s.External = s.Floor == custody.AuthorityExternal
	return &s, nil
}

func (t *txn) AddObservation(ctx context.Context, o *custody.Observation) error {
	return t.exec(ctx, `INSERT INTO observations (id, tenant, session, channel, text, source_ref, authority, created_at)
 VALUES ($1,$2,$3,$4,$5,$6,$7,$8)`, o.ID, o.Tenant, o.Session, o.Channel, o.Text, o.SourceRef, int16(o.Authority), o.CreatedAt.UnixNano())
}

func (t *txn) Observations(ctx context.Context, tenant, session string) ([]*custody.Observation, error) {
	if !storable(tenant, session) {
		return nil, nil
	}
	rows, err := t.tx.Query(ctx, `SELECT id, tenant, session, channel, text, source_ref, authority, created_at
 FROM observations WHERE tenant = $1 AND session = $2 ORDER BY id`, tenant, session)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	var out []*custody.Observation
	for rows.Next() {
		var o custody.Observation
		var authority int16
		var created int64
		if err := rows.Scan(&o.ID, &o.Tenant, &o.Session, &o.Channel, &o.Text, &o.SourceRef, &authority, &created); err != nil {
			return nil, classify(err)
		}
		o.Authority = custody.Authority(authority)
		o.CreatedAt = time.Unix(0, created).UTC()
		out = append(out, &o)
	}
	return out, classify(rows.Err())
}

// ScanSessions calls fn for every session.
func (t *txn) ScanSessions(ctx context.Context, fn func(*custody.Session) error) error {
	rows, err := t.tx.Query(ctx, `SELECT id, tenant, subject, opener, created_at FROM sessions ORDER BY tenant, id`)
	if err != nil {
		return classify(err)
	}
	defer rows.Close()
	for rows.Next() {
		var s custody.Session
		var created int64
		if err := rows.Scan(&s.ID, &s.Tenant, &s.Subject, &s.Opener, &created); err != nil {
			return classify(err)
		}
		s.CreatedAt = time.Unix(0, created).UTC()
		if err := fn(&s); err != nil {
			return err
		}
	}
	return classify(rows.Err())
}

// EraseObservations empties the text of the tenant's observations whose
// source is sourceRef.
func (t *txn) EraseObservations(ctx context.Context, tenant, sourceRef string) error {
	if t.ro {
		return errReadOnly
	}
	_, err := t.tx.Exec(ctx, `UPDATE observations SET text = '' WHERE tenant = $1 AND source_ref = $2 AND text <> ''`, tenant, sourceRef)
	return classify(err)
}

// ScanObservations calls fn for every observation.
func (t *txn) ScanObservations(ctx context.Context, fn func(*custody.Observation) error) error {
	rows, err := t.tx.Query(ctx, `SELECT id, tenant, session, channel, text, source_ref, authority, created_at
 FROM observations ORDER BY tenant, id`)
	if err != nil {
		return classify(err)
	}
	defer rows.Close()
	for rows.Next() {
		var o custody.Observation
		var authority int16
		var created int64
		if err := rows.Scan(&o.ID, &o.Tenant, &o.Session, &o.Channel, &o.Text, &o.SourceRef, &authority, &created); err != nil {
			return classify(err)
		}
		o.Authority = custody.Authority(authority)
		o.CreatedAt = time.Unix(0, created).UTC()
		if err := fn(&o); err != nil {
			return err
		}
	}
	return classify(rows.Err())
}
