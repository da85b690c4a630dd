package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/tlog"
	"github.com/jackc/pgx/v5"
)

// SetPrincipalLogIndex points a principal at its latest log entry.
func (t *txn) SetPrincipalLogIndex(ctx context.Context, tenant, name string, index uint64) error {
	if t.ro {
		return errReadOnly
	}
	tag, err := t.tx.Exec(ctx, `UPDATE principals SET log_index = $1 WHERE tenant = $2 AND name = $3`, int64(index), tenant, name)
	if err != nil {
		return classify(err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("pointing principal %s/%s at log entry %d: %d rows", tenant, name, index, tag.RowsAffected())
	}
	// Every change custody makes to a principal ends here: it moves the
	// principals version itself too, so that servers' caches drop the
	// principal even where the trigger that does it has been disabled.
	_, err = t.tx.Exec(ctx, bumpPrincipalsVersion)
	return classify(err)
}

// bumpPrincipalsVersion moves the principals version (migration 010).
const bumpPrincipalsVersion = `UPDATE principals_version SET n = n + 1 WHERE id = 0`

// migrationSteps are the Go steps of migrations, by name, run after the
// migration's SQL in its transaction.
var migrationSteps = map[string]func(context.Context, pgx.Tx) error{
	"principal_log_index": linkPrincipals,
	"tenant_logs":         tenantLogs,
}

// principalEntryMark is how the transition "principal" is encoded in a
// leaf (its length, then the bytes): a leaf without it is no principal
// entry, so linkPrincipals parses only the few that have it.
var principalEntryMark = append([]byte{byte(len(custody.TransitionPrincipal))}, custody.TransitionPrincipal...)

// linkPrincipals points every principal of an existing database at its
// latest principal entry: one pass over the leaves that may be principal
// entries. A principal the log never introduced keeps no index, and the
// server refuses it.
func linkPrincipals(ctx context.Context, tx pgx.Tx) error {
	rows, err := tx.Query(ctx, `SELECT idx, data FROM log_leaves WHERE position($1::bytea IN data) > 0 ORDER BY idx`, principalEntryMark)
	if err != nil {
		return err
	}
	latest := map[[2]string]int64{}
	for rows.Next() {
		var idx int64
		var data []byte
		if err := rows.Scan(&idx, &data); err != nil {
			rows.Close()
			return err
		}
		if e, err := tlog.ParseLeaf(data); err == nil && e.Transition == custody.TransitionPrincipal && e.Actor == custody.ServerActor {
			latest[[2]string{e.Tenant, e.Details["name"]}] = idx
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for k, idx := range latest {
		if _, err := tx.Exec(ctx, `UPDATE principals SET log_index = $1 WHERE tenant = $2 AND name = $3`, idx, k[0], k[1]); err != nil {
			return err
		}
	}
	return nil
}

func (t *txn) InsertPrincipal(ctx context.Context, p *custody.Principal, tokenHash, sealedKey []byte) error {
	return t.exec(ctx, `INSERT INTO principals (tenant, name, roles, channels, groups_, public_key, sealed_key, token_hash, created_at)
 VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9)`, p.Tenant, p.Name, nonNil(p.Roles), nonNil(p.Channels), nonNil(p.Groups),
		[]byte(p.PublicKey), sealedKey, tokenHash, p.CreatedAt.UnixNano())
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

const principalCols = `tenant, name, roles, channels, groups_, public_key, created_at, token_hash, sealed_key, log_index`

func scanPrincipal(row pgx.Row) (*custody.Principal, error) {
	var p custody.Principal
	var created int64
	var pub []byte
	var logIndex *int64
	if err := row.Scan(&p.Tenant, &p.Name, &p.Roles, &p.Channels, &p.Groups, &pub, &created, &p.TokenHash, &p.SealedKey, &logIndex); err != nil {
		return nil, notFound(err)
	}
	p.PublicKey = pub
	p.LogIndex = custody.NoLogIndex
	if logIndex != nil {
		p.LogIndex = *logIndex
	}
	p.CreatedAt = time.Unix(0, created).UTC()
	return &p, nil
}

func (t *txn) Principal(ctx context.Context, tenant, name string) (*custody.Principal, error) {
	if !storable(tenant, name) {
		return nil, custody.ErrNotFound
	}
	return scanPrincipal(t.tx.QueryRow(ctx, `SELECT `+principalCols+` FROM principals WHERE tenant = $1 AND name = $2`, tenant, name))
}

// Principals lists a tenant's principals ("" = every tenant's), by tenant
// and name.
func (t *txn) Principals(ctx context.Context, tenant string) ([]*custody.Principal, error) {
	if !storable(tenant) {
		return nil, nil
	}
	rows, err := t.tx.Query(ctx, `SELECT `+principalCols+` FROM principals WHERE $1 = '' OR tenant = $1 ORDER BY tenant COLLATE "C", name COLLATE "C"`, tenant)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	var out []*custody.Principal
	for rows.Next() {
		p, err := scanPrincipal(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, classify(rows.Err())
}

// PrincipalByToken resolves a token hash.
func (s *Store) PrincipalByToken(ctx context.Context, hash []byte) (*custody.Principal, error) {
	p, err := scanPrincipal(s.pool.QueryRow(ctx, `SELECT `+principalCols+` FROM principals WHERE token_hash = $1`, hash))
	if err != nil && !errors.Is(err, custody.ErrNotFound) {
		return nil, unavailable(err)
	}
	return p, err
}

func (t *txn) TokenHash(ctx context.Context, tenant, name string) ([]byte, error) {
	if !storable(tenant, name) {
		return nil, custody.ErrNotFound
	}
	var h []byte
	err := t.tx.QueryRow(ctx, `SELECT token_hash FROM principals WHERE tenant = $1 AND name = $2`, tenant, name).Scan(&h)
	return h, notFound(err)
}

func (t *txn) SealedKey(ctx context.Context, tenant, name string) ([]byte, error) {
	if !storable(tenant, name) {
		return nil, custody.ErrNotFound
	}
	var k []byte
	err := t.tx.QueryRow(ctx, `SELECT sealed_key FROM principals WHERE tenant = $1 AND name = $2`, tenant, name).Scan(&k)
	return k, notFound(err)
}
