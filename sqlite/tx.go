package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	custody "github.com/custody-mem/custody"
)

// A transaction's reads and writes of records, principals, policies,
// sessions, grants and tombstones (custody.Tx); the transaction itself,
// its statements and its connection are txn.go's.

func (t *txn) Record(ctx context.Context, tenant, id string) (*custody.Record, error) {
	r, _, err := scanRecord(t.QueryRowContext(ctx, `SELECT `+recordCols+` FROM records r WHERE r.id = ? AND r.tenant = ?`, id, tenant))
	return r, notFound(err)
}

func (t *txn) Current(ctx context.Context, tenant, owner, ns, key string) (*custody.Record, error) {
	r, _, err := scanRecord(t.QueryRowContext(ctx, `SELECT `+recordCols+` FROM records r
 WHERE r.tenant = ? AND r.owner = ? AND r.namespace = ? AND r.key = ? AND r.key != '' AND r.head = 1
 ORDER BY r.version DESC LIMIT 1`, tenant, owner, ns, key))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return r, err
}

func (t *txn) CurrentID(ctx context.Context, tenant, owner, ns, key string) (string, error) {
	var id string
	err := t.QueryRowContext(ctx, `SELECT id FROM records
 WHERE tenant = ? AND owner = ? AND namespace = ? AND key = ? AND key != '' AND head = 1
 ORDER BY version DESC LIMIT 1`, tenant, owner, ns, key).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return id, err
}

func (t *txn) MaxVersion(ctx context.Context, tenant, owner, ns, key string) (int, error) {
	var v int
	err := t.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM records
 WHERE tenant = ? AND owner = ? AND namespace = ? AND key = ? AND key != ''`, tenant, owner, ns, key).Scan(&v)
	return v, err
}

// KeyVersions reads CurrentID and MaxVersion with one statement, both
// parts from records_ns_key alone: the head walking the key's versions
// down, the newest version its last entry.
func (t *txn) KeyVersions(ctx context.Context, tenant, owner, ns, key string) (string, int, error) {
	var id sql.NullString
	var v int
	err := t.QueryRowContext(ctx, `SELECT (SELECT id FROM records
 WHERE tenant = ?1 AND owner = ?2 AND namespace = ?3 AND key = ?4 AND key != '' AND head = 1 ORDER BY version DESC LIMIT 1),
 (SELECT COALESCE(MAX(version), 0) FROM records WHERE tenant = ?1 AND owner = ?2 AND namespace = ?3 AND key = ?4 AND key != '')`,
		tenant, owner, ns, key).Scan(&id, &v)
	return id.String, v, err
}

// Versions and MaxVersion read keyed records only (a keyless record has
// no versions): saying the key is not empty lets SQLite use
// records_ns_key, which holds keyed records only.
func (t *txn) Versions(ctx context.Context, tenant, owner, ns, key string) ([]*custody.Record, error) {
	return queryRecords(ctx, t, `SELECT `+recordCols+` FROM records r
 WHERE r.tenant = ? AND r.owner = ? AND r.namespace = ? AND r.key = ? AND r.key != '' ORDER BY r.version, r.id`, tenant, owner, ns, key)
}

func (t *txn) InsertRecord(ctx context.Context, r *custody.Record) error {
	if t.ro {
		return errReadOnly
	}
	head := insertedHead(r)
	res, err := t.ExecContext(ctx, `INSERT INTO records (id, tenant, owner, namespace, key, class, body, channel, writer,
 source_ref, authority, audience, state, head, created_at, expires_at, version, log_index, policy_version, session, parents, erased, receipt, salt, metadata)
 VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		r.ID, r.Tenant, r.Owner, r.Namespace, r.Key, string(r.Class), r.Body, r.Channel, r.Writer, r.SourceRef,
		int(r.Authority), r.Audience, string(r.State), head, r.CreatedAt.UnixNano(), nullTime(r.ExpiresAt), r.Version, r.LogIndex,
		policyVersionArg(r.PolicyVersion), r.Session, jsonText(r.Parents), r.Erased, receiptText(r.Receipt, r, allFields), saltArg(r.Salt), r.Metadata.JSON())
	if err != nil {
		return err
	}
	rid, err := res.LastInsertId()
	if err != nil {
		return err
	}
	if t.firstRid == 0 {
		t.firstRid = rid
	}
	t.lastRid = rid
	if err := t.index(ctx, rid, r); err != nil {
		return err
	}
	return t.insertEdges(ctx, rid, r)
}

// index queues a record for the search and trigram indexes (pending.go).
func (t *txn) index(ctx context.Context, rid int64, r *custody.Record) error {
	if r.Erased {
		return nil
	}
	return t.addPending(ctx, rid, r)
}

func (t *txn) UpdateRecord(ctx context.Context, r *custody.Record) error {
	var rid int64
	var wasErased bool
	var oldParents, oldBody, key, owner, oldAudience, oldMeta string
	if err := t.QueryRowContext(ctx, `SELECT rid, erased, parents, body, key, owner, audience, metadata FROM records WHERE id = ? AND tenant = ?`, r.ID, r.Tenant).Scan(&rid, &wasErased, &oldParents, &oldBody, &key, &owner, &oldAudience, &oldMeta); err != nil {
		return notFound(err)
	}
	parents := jsonText(r.Parents)
	err := t.exec(ctx, `UPDATE records SET body = ?, authority = ?, audience = ?, state = ?, log_index = ?, policy_version = ?,
 parents = ?, erased = ?, receipt = ?, salt = ?, metadata = ? WHERE rid = ?`,
		r.Body, int(r.Authority), r.Audience, string(r.State), r.LogIndex, policyVersionArg(r.PolicyVersion), parents, r.Erased,
		receiptText(r.Receipt, r, updatedFields), saltArg(r.Salt), r.Metadata.JSON(), rid)
	if err != nil {
		return err
	}
	if r.Erased && !wasErased {
		if err := t.unindex(ctx, rid, oldBody, key, oldMeta); err != nil {
			return err
		}
	}
	// Edges follow the parents (a rebuild may drop weak parents that are out).
	if parents == oldParents {
		return nil
	}
	if err := t.exec(ctx, `DELETE FROM edges WHERE child = ?`, r.ID); err != nil {
		return err
	}
	return t.insertEdges(ctx, rid, r)
}

// InState reads records in the given states. The states are written into
// the query as literals (from the fixed set below), so that SQLite can use
// the partial index records_waiting, named when every state asked for is
// one people wait on; other states are read by a scan, which only tests ask
// for.
func (t *txn) InState(ctx context.Context, tenant string, states []custody.State, after string, limit int) ([]*custody.Record, error) {
	lits := make([]string, len(states))
	allWaiting := true
	for i, st := range states {
		waits, ok := knownStates[st]
		if !ok {
			return nil, fmt.Errorf("sqlite: unknown state %q", st)
		}
		allWaiting = allWaiting && waits
		lits[i] = "'" + string(st) + "'"
	}
	q := `SELECT ` + recordCols + ` FROM records r WHERE r.state IN (` + strings.Join(lits, ",") + `)`
	if allWaiting { // name the index, and repeat its own condition for SQLite to accept it
		q = `SELECT ` + recordCols + ` FROM records r INDEXED BY records_waiting WHERE r.state IN (` + strings.Join(lits, ",") + `)
 AND (r.state = 'pending' OR r.state = 'quarantined' OR r.state = 'pending_confirmation')`
	}
	var args []any
	if tenant != "" {
		q += ` AND r.tenant = ?`
		args = append(args, tenant)
	}
	if after != "" {
		q += ` AND r.id > ?`
		args = append(args, after)
	}
	q += ` ORDER BY r.id LIMIT ?`
	return queryRecords(ctx, t, q, append(args, limit)...)
}

// knownStates maps every state to whether records_waiting holds it.
var knownStates = map[custody.State]bool{
	custody.StateQuarantined: true, custody.StatePendingConfirmation: true, custody.StatePending: true,
	custody.StateAdmitted: false, custody.StateRejected: false, custody.StateRetired: false, custody.StateSuspended: false,
}

func (t *txn) ScanRecords(ctx context.Context, tenant string, fn func(*custody.Record) error) error {
	q := `SELECT ` + recordCols + ` FROM records r`
	var args []any
	if tenant != "" {
		q += ` WHERE +r.tenant = ?` // stream in rid order; a tenant index would sort the whole tenant first
		args = append(args, tenant)
	}
	rows, err := t.QueryContext(ctx, q+` ORDER BY r.rid`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		r, _, err := scanRecord(rows)
		if err != nil {
			return err
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return rows.Err()
}

func (t *txn) InsertPrincipal(ctx context.Context, p *custody.Principal, tokenHash, sealedKey []byte) error {
	return t.exec(ctx, `INSERT INTO principals (tenant, name, roles, channels, groups_, public_key, sealed_key, token_hash, created_at)
 VALUES (?,?,?,?,?,?,?,?,?)`, p.Tenant, p.Name, jsonText(p.Roles), jsonText(p.Channels), jsonText(nonNil(p.Groups)),
		p.PublicKey, sealedKey, tokenHash, p.CreatedAt.UnixNano())
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

const principalCols = `tenant, name, roles, channels, groups_, public_key, created_at, token_hash, sealed_key, log_index`

func scanPrincipal(sc scanner) (*custody.Principal, error) {
	var p custody.Principal
	var roles, channels, groups string
	var created int64
	var logIndex sql.NullInt64
	if err := sc.Scan(&p.Tenant, &p.Name, &roles, &channels, &groups, &p.PublicKey, &created, &p.TokenHash, &p.SealedKey, &logIndex); err != nil {
		return nil, notFound(err)
	}
	p.CreatedAt = time.Unix(0, created).UTC()
	p.LogIndex = custody.NoLogIndex
	if logIndex.Valid {
		p.LogIndex = logIndex.Int64
	}
	for _, f := range []struct {
		s   string
		dst *[]string
	}{{roles, &p.Roles}, {channels, &p.Channels}, {groups, &p.Groups}} {
		if err := json.Unmarshal([]byte(f.s), f.dst); err != nil {
			return nil, fmt.Errorf("principal %s/%s: %w", p.Tenant, p.Name, err)
		}
	}
	return &p, nil
}

func (t *txn) Principal(ctx context.Context, tenant, name string) (*custody.Principal, error) {
	return scanPrincipal(t.QueryRowContext(ctx, `SELECT `+principalCols+` FROM principals WHERE tenant = ? AND name = ?`, tenant, name))
}

func (t *txn) Principals(ctx context.Context, tenant string) ([]*custody.Principal, error) {
	rows, err := t.QueryContext(ctx, `SELECT `+principalCols+` FROM principals WHERE ? = '' OR tenant = ? ORDER BY tenant, name`, tenant, tenant)
	if err != nil {
		return nil, err
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
	return out, rows.Err()
}

// PrincipalByToken resolves a token hash.
func (s *Store) PrincipalByToken(ctx context.Context, hash []byte) (*custody.Principal, error) {
	p, err := scanPrincipal(s.reader().QueryRowContext(ctx, `SELECT `+principalCols+` FROM principals WHERE token_hash = ?`, hash))
	if err != nil && !errors.Is(err, custody.ErrNotFound) {
		return nil, unavailable(err)
	}
	return p, err
}

func (t *txn) TokenHash(ctx context.Context, tenant, name string) ([]byte, error) {
	var h []byte
	err := t.QueryRowContext(ctx, `SELECT token_hash FROM principals WHERE tenant = ? AND name = ?`, tenant, name).Scan(&h)
	return h, notFound(err)
}

func (t *txn) SealedKey(ctx context.Context, tenant, name string) ([]byte, error) {
	var k []byte
	err := t.QueryRowContext(ctx, `SELECT sealed_key FROM principals WHERE tenant = ? AND name = ?`, tenant, name).Scan(&k)
	return k, notFound(err)
}

// Policy reads the tenant's active policy, which the writer keeps (see
// known.go).
func (t *txn) Policy(ctx context.Context, tenant string) ([]byte, error) {
	if t.known != nil {
		if p, ok := t.known.policies[tenant]; ok {
			if !p.found {
				return nil, custody.ErrNotFound
			}
			return bytes.Clone(p.text), nil
		}
	}
	var text []byte
	err := t.QueryRowContext(ctx, `SELECT text FROM policies WHERE tenant = ? ORDER BY seq DESC LIMIT 1`, tenant).Scan(&text)
	if t.known != nil && (err == nil || errors.Is(err, sql.ErrNoRows)) {
		t.known.setPolicy(tenant, policyText{text: bytes.Clone(text), found: err == nil})
	}
	return text, notFound(err)
}

func (t *txn) SetPolicy(ctx context.Context, tenant string, text []byte, actor string, at time.Time) error {
	if err := t.exec(ctx, `INSERT INTO policies (tenant, text, actor, created_at) VALUES (?,?,?,?)`, tenant, text, actor, at.UnixNano()); err != nil {
		return err
	}
	if t.known != nil {
		t.known.setPolicy(tenant, policyText{text: bytes.Clone(text), found: true})
	}
	return nil
}

func (t *txn) InsertSession(ctx context.Context, s *custody.Session) error {
	return t.exec(ctx, `INSERT INTO sessions (id, tenant, subject, opener, created_at) VALUES (?,?,?,?,?)`,
		s.ID, s.Tenant, s.Subject, s.Opener, s.CreatedAt.UnixNano())
}

func (t *txn) Session(ctx context.Context, tenant, id string) (*custody.Session, error) {
	var s custody.Session
	var created int64
	var floor sql.NullInt64
	err := t.QueryRowContext(ctx, `SELECT s.id, s.tenant, s.subject, s.opener, s.created_at,
 (SELECT MIN(authority) FROM observations o WHERE o.tenant = s.tenant AND o.session = s.id)
 FROM sessions s WHERE s.id = ? AND s.tenant = ?`, id, tenant).Scan(&s.ID, &s.Tenant, &s.Subject, &s.Opener, &created, &floor)
	if err != nil {
		return nil, notFound(err)
	}
	s.CreatedAt = time.Unix(0, created).UTC()
	s.Floor = custody.AuthorityConfirmed
	if floor.Valid {
		s.Floor = custody.Authority(floor.Int64)
	}
	s.External = s.Floor == custody.AuthorityExternal
	return &s, nil
}

func (t *txn) AddObservation(ctx context.Context, o *custody.Observation) error {
	return t.exec(ctx, `INSERT INTO observations (id, tenant, session, channel, text, source_ref, authority, created_at)
 VALUES (?,?,?,?,?,?,?,?)`, o.ID, o.Tenant, o.Session, o.Channel, o.Text, o.SourceRef, int(o.Authority), o.CreatedAt.UnixNano())
}

func (t *txn) Observations(ctx context.Context, tenant, session string) ([]*custody.Observation, error) {
	rows, err := t.QueryContext(ctx, `SELECT id, tenant, session, channel, text, source_ref, authority, created_at
 FROM observations WHERE tenant = ? AND session = ? ORDER BY id`, tenant, session)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*custody.Observation
	for rows.Next() {
		var o custody.Observation
		var created int64
		if err := rows.Scan(&o.ID, &o.Tenant, &o.Session, &o.Channel, &o.Text, &o.SourceRef, &o.Authority, &created); err != nil {
			return nil, err
		}
		o.CreatedAt = time.Unix(0, created).UTC()
		out = append(out, &o)
	}
	return out, rows.Err()
}

func (t *txn) InsertGrant(ctx context.Context, g *custody.Grant) error {
	return t.exec(ctx, `INSERT INTO grants (id, tenant, subject, digest, actor, created_at) VALUES (?,?,?,?,?,?)`,
		g.ID, g.Tenant, g.Subject, g.Digest, g.Actor, g.CreatedAt.UnixNano())
}

func (t *txn) UseGrant(ctx context.Context, tenant, subject, digest string, at time.Time) (bool, error) {
	if t.ro {
		return false, errReadOnly
	}
	res, err := t.ExecContext(ctx, `UPDATE grants SET used_at = ? WHERE id = (SELECT id FROM grants
 WHERE tenant = ? AND subject = ? AND digest = ? AND used_at IS NULL ORDER BY id LIMIT 1)`, at.UnixNano(), tenant, subject, digest)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// ScanGrants calls fn for every grant, by tenant and id.
func (t *txn) ScanGrants(ctx context.Context, fn func(*custody.StoredGrant) error) error {
	rows, err := t.QueryContext(ctx, `SELECT id, tenant, subject, digest, actor, created_at, used_at FROM grants ORDER BY tenant, id`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var g custody.StoredGrant
		var created int64
		var used sql.NullInt64
		if err := rows.Scan(&g.ID, &g.Tenant, &g.Subject, &g.Digest, &g.Actor, &created, &used); err != nil {
			return err
		}
		g.CreatedAt = time.Unix(0, created).UTC()
		if used.Valid {
			at := time.Unix(0, used.Int64).UTC()
			g.UsedAt = &at
		}
		if err := fn(&g); err != nil {
			return err
		}
	}
	return rows.Err()
}

func (t *txn) Tombstone(ctx context.Context, tenant, id string, state custody.State) error {
	return t.exec(ctx, `INSERT INTO tombstones (tenant, id, state) VALUES (?,?,?)
 ON CONFLICT (tenant, id) DO UPDATE SET state = excluded.state`, tenant, id, string(state))
}

func (t *txn) Tombstoned(ctx context.Context, tenant, id string) (bool, error) {
	var n int
	err := t.QueryRowContext(ctx, `SELECT COUNT(*) FROM tombstones WHERE tenant = ? AND id = ?`, tenant, id).Scan(&n)
	return n > 0, err
}

// MisplacedEdge returns a record whose lineage edges disagree with its
// parents ("" if none): an edge that names no such parent of its child,
// another weight, tenant or row, or a parent with no edge.
func (t *txn) MisplacedEdge(ctx context.Context) (string, error) {
	var id string
	err := t.QueryRowContext(ctx, `SELECT id FROM (
   SELECT e.child AS id FROM edges e LEFT JOIN records r ON r.rid = e.child_rid
    WHERE r.id IS NOT e.child OR r.tenant IS NOT e.tenant OR NOT EXISTS (SELECT 1 FROM json_each(r.parents) p
      WHERE p.value ->> '$.id' = e.parent AND p.value ->> '$.weight' = e.weight)
   UNION ALL
   SELECT r.id FROM records r, json_each(r.parents) p
    WHERE NOT EXISTS (SELECT 1 FROM edges e WHERE e.parent = p.value ->> '$.id' AND e.child = r.id))
 LIMIT 1`).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return id, err
}

// MisflaggedHead returns a record whose head flag disagrees with its key's
// versions ("" if none).
func (t *txn) MisflaggedHead(ctx context.Context) (string, error) {
	var id string
	err := t.QueryRowContext(ctx, `SELECT r.id FROM records r WHERE r.head != `+isHead("r")+` LIMIT 1`).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return id, err
}
