package postgres

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	custody "github.com/custody-mem/custody"
	"github.com/jackc/pgx/v5"
)

// txn implements custody.Tx over one transaction.
type txn struct {
	tx pgx.Tx
	ro bool
}

var _ custody.Tx = (*txn)(nil)

var errReadOnly = errors.New("postgres: write in a read-only transaction")

// storable reports whether every one of ss can be held in a PostgreSQL
// text column: valid UTF-8 without NUL. A lookup by a value that is not
// storable matches nothing, so it is answered without asking the server,
// whose error would abort the transaction (SQLite simply finds nothing).
func storable(ss ...string) bool {
	for _, s := range ss {
		if strings.IndexByte(s, 0) >= 0 || !utf8.ValidString(s) {
			return false
		}
	}
	return true
}

func (t *txn) exec(ctx context.Context, q string, args ...any) error {
	if t.ro {
		return errReadOnly
	}
	_, err := t.tx.Exec(ctx, q, args...)
	return classify(err)
}

func (t *txn) Record(ctx context.Context, tenant, id string) (*custody.Record, error) {
	if !storable(tenant, id) {
		return nil, custody.ErrNotFound
	}
	r, err := scanRecord(t.tx.QueryRow(ctx, `SELECT `+recordCols+` FROM records r WHERE r.id = $1 AND r.tenant = $2`, id, tenant))
	return r, notFound(err)
}

func (t *txn) Current(ctx context.Context, tenant, owner, ns, key string) (*custody.Record, error) {
	if !storable(tenant, owner, ns, key) {
		return nil, nil
	}
	r, err := scanRecord(t.tx.QueryRow(ctx, `SELECT `+recordCols+` FROM records r
 WHERE r.tenant = $1 AND r.owner = $2 AND r.namespace = $3 AND r.key = $4 AND r.state = 'admitted'
 ORDER BY r.version DESC LIMIT 1`, tenant, owner, ns, key))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	return r, classify(err)
}

func (t *txn) CurrentID(ctx context.Context, tenant, owner, ns, key string) (string, error) {
	if !storable(tenant, owner, ns, key) {
		return "", nil
	}
	var id string
	err := t.tx.QueryRow(ctx, `SELECT r.id FROM records r
 WHERE r.tenant = $1 AND r.owner = $2 AND r.namespace = $3 AND r.key = $4 AND r.state = 'admitted'
 ORDER BY r.version DESC LIMIT 1`, tenant, owner, ns, key).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return id, classify(err)
}

func (t *txn) MaxVersion(ctx context.Context, tenant, owner, ns, key string) (int, error) {
	if !storable(tenant, owner, ns, key) {
		return 0, nil
	}
	var v int
	err := t.tx.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM records
 WHERE tenant = $1 AND owner = $2 AND namespace = $3 AND key = $4`, tenant, owner, ns, key).Scan(&v)
	return v, classify(err)
}

// KeyVersions reads CurrentID and MaxVersion in one round trip.
func (t *txn) KeyVersions(ctx context.Context, tenant, owner, ns, key string) (string, int, error) {
	if !storable(tenant, owner, ns, key) {
		return "", 0, nil
	}
	return scanKeyVersions(t.tx.QueryRow(ctx, keyVersionsQuery, tenant, owner, ns, key))
}

// KeysVersions is KeyVersions of each of keys in one statement.
func (t *txn) KeysVersions(ctx context.Context, tenant, owner string, keys []custody.NamespaceKey) ([]custody.KeyVersions, error) {
	q, args := keysVersionsQuery(tenant, owner, keys)
	return scanKeysVersions(t.tx.Query(ctx, q, args...))
}

// keysVersionsQuery is keyVersionsQuery for many keys of one owner, a row
// each in their order. A key that cannot be stored (storable) is matched
// by none.
func keysVersionsQuery(tenant, owner string, keys []custody.NamespaceKey) (string, []any) {
	nss, ks := make([]*string, len(keys)), make([]*string, len(keys)) // NULL matches nothing
	for i, k := range keys {
		if storable(k.Namespace, k.Key) {
			nss[i], ks[i] = &k.Namespace, &k.Key
		}
	}
	var t, o *string
	if storable(tenant, owner) {
		t, o = &tenant, &owner
	}
	return `SELECT (SELECT r.id FROM records r
 WHERE r.tenant = $1 AND r.owner = $2 AND r.namespace = k.ns AND r.key = k.key AND r.state = 'admitted'
 ORDER BY r.version DESC LIMIT 1),
 (SELECT COALESCE(MAX(version), 0) FROM records WHERE tenant = $1 AND owner = $2 AND namespace = k.ns AND key = k.key)
 FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS k(ns, key, i) ORDER BY k.i`, []any{t, o, nss, ks}
}

// scanKeysVersions reads the rows of keysVersionsQuery.
func scanKeysVersions(rows pgx.Rows, err error) ([]custody.KeyVersions, error) {
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	var out []custody.KeyVersions
	for rows.Next() {
		var id *string
		var v custody.KeyVersions
		if err := rows.Scan(&id, &v.Max); err != nil {
			return nil, classify(err)
		}
		if id != nil {
			v.Current = *id
		}
		out = append(out, v)
	}
	return out, classify(rows.Err())
}

// keyVersionsQuery reads the id of the admitted version in force of key
// $4 of namespace $3 of owner $2 of tenant $1, and the key's highest
// version.
const keyVersionsQuery = `SELECT (SELECT r.id FROM records r
 WHERE r.tenant = $1 AND r.owner = $2 AND r.namespace = $3 AND r.key = $4 AND r.state = 'admitted'
 ORDER BY r.version DESC LIMIT 1),
 (SELECT COALESCE(MAX(version), 0) FROM records WHERE tenant = $1 AND owner = $2 AND namespace = $3 AND key = $4)`

// scanKeyVersions reads the row of keyVersionsQuery.
func scanKeyVersions(row pgx.Row) (string, int, error) {
	var id *string
	var v int
	if err := row.Scan(&id, &v); err != nil {
		return "", 0, classify(err)
	}
	if id == nil {
		return "", v, nil
	}
	return *id, v, nil
}

func (t *txn) Versions(ctx context.Context, tenant, owner, ns, key string) ([]*custody.Record, error) {
	if !storable(tenant, owner, ns, key) {
		return nil, nil
	}
	return queryRecords(ctx, t.tx, `SELECT `+recordCols+` FROM records r
 WHERE r.tenant = $1 AND r.owner = $2 AND r.namespace = $3 AND r.key = $4 ORDER BY r.version, r.id`, tenant, owner, ns, key)
}

func (t *txn) InsertRecord(ctx context.Context, r *custody.Record) error {
	created, err := nanos("created_at", r.CreatedAt)
	if err != nil {
		return err
	}
	expires, err := nullNanos("expires_at", r.ExpiresAt)
	if err != nil {
		return err
	}
	err = t.execLater(ctx, `INSERT INTO records (id, tenant, owner, namespace, key, class, body, channel, writer,
 source_ref, authority, audience, state, created_at, expires_at, version, log_index, policy_version, session, parents, erased,
 receipt, search, norm, salt, metadata)
 VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23::text::tsvector,$24,$25,$26)`,
		r.ID, r.Tenant, r.Owner, r.Namespace, r.Key, string(r.Class), r.Body, r.Channel, r.Writer, r.SourceRef,
		int16(r.Authority), r.Audience, string(r.State), created, expires, r.Version, int64(r.LogIndex),
		r.PolicyVersion, r.Session, jsonText(nonNilEdges(r.Parents)), r.Erased, receiptText(r.Receipt), documentText(r), normText(r),
		saltArg(r.Salt), r.Metadata.JSON())
	if err != nil {
		return err
	}
	return t.insertEdges(ctx, r)
}

func (t *txn) insertEdges(ctx context.Context, r *custody.Record) error {
	if len(r.Parents) == 0 {
		return nil
	}
	parents := make([]string, len(r.Parents))
	weights := make([]float64, len(r.Parents))
	for i, e := range r.Parents {
		parents[i], weights[i] = e.ID, e.Weight
	}
	return t.execLater(ctx, `INSERT INTO edges (tenant, parent, child, weight)
 SELECT $1, p, $2, w FROM unnest($3::text[], $4::float8[]) AS x(p, w)`, r.Tenant, r.ID, parents, weights)
}

func nonNilEdges(es []custody.Edge) []custody.Edge {
	if es == nil {
		return []custody.Edge{}
	}
	return es
}

func (t *txn) UpdateRecord(ctx context.Context, r *custody.Record) error {
	if t.ro {
		return errReadOnly
	}
	tag, err := t.tx.Exec(ctx, `UPDATE records SET body = $1, authority = $2, audience = $3, state = $4, log_index = $5,
 policy_version = $6, parents = $7, erased = $8, receipt = $9, search = $10::text::tsvector, norm = $11, salt = $14, metadata = $15
 WHERE id = $12 AND tenant = $13`,
		r.Body, int16(r.Authority), r.Audience, string(r.State), int64(r.LogIndex), r.PolicyVersion,
		jsonText(nonNilEdges(r.Parents)), r.Erased, receiptText(r.Receipt), documentText(r), normText(r), r.ID, r.Tenant, saltArg(r.Salt), r.Metadata.JSON())
	if err != nil {
		return classify(err)
	}
	if tag.RowsAffected() == 0 {
		return custody.ErrNotFound
	}
	// Edges follow the parents (a rebuild may drop weak parents that are out).
	if err := t.exec(ctx, `DELETE FROM edges WHERE child = $1`, r.ID); err != nil {
		return err
	}
	return t.insertEdges(ctx, r)
}

func (t *txn) strings(ctx context.Context, q string, args ...any) ([]string, error) {
	rows, err := t.tx.Query(ctx, q, args...)
	if err != nil {
		return nil, classify(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return out, classify(err)
}

func (t *txn) Children(ctx context.Context, tenant, id string) ([]string, error) {
	if !storable(tenant, id) {
		return nil, nil
	}
	return t.strings(ctx, `SELECT child FROM edges WHERE parent = $1 AND tenant = $2 ORDER BY child`, id, tenant)
}

// Descendants lists every record reachable from id by child edges,
// transitively, with its state, in id order.
func (t *txn) Descendants(ctx context.Context, tenant, id string) ([]custody.IDState, error) {
	if !storable(tenant, id) {
		return nil, nil
	}
	rows, err := t.tx.Query(ctx, `WITH RECURSIVE d(id) AS (
   SELECT child FROM edges WHERE parent = $1 AND tenant = $2
   UNION SELECT e.child FROM edges e JOIN d ON e.parent = d.id WHERE e.tenant = $2)
 SELECT r.id, r.state FROM d JOIN records r ON r.id = d.id AND r.tenant = $2 ORDER BY r.id`, id, tenant)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	var out []custody.IDState
	for rows.Next() {
		var d custody.IDState
		var state string
		if err := rows.Scan(&d.ID, &state); err != nil {
			return nil, classify(err)
		}
		d.State = custody.State(state)
		out = append(out, d)
	}
	return out, classify(rows.Err())
}

// SetStates moves records of tenant to state, with a log index and a
// receipt, in one statement (a cascade).
func (t *txn) SetStates(ctx context.Context, tenant string, recs []custody.IDState, state custody.State, logIndex uint64, rc *custody.Receipt) error {
	if t.ro {
		return errReadOnly
	}
	if len(recs) == 0 || !storable(tenant) {
		return nil
	}
	ids := make([]string, len(recs))
	for i, r := range recs {
		ids[i] = r.ID
	}
	return t.exec(ctx, `UPDATE records SET state = $1, log_index = $2, receipt = $3 WHERE tenant = $4 AND id = ANY($5::text[])`,
		string(state), int64(logIndex), receiptText(rc), tenant, ids)
}

func (t *txn) InState(ctx context.Context, tenant string, states []custody.State, after string, limit int) ([]*custody.Record, error) {
	if !storable(tenant, after) {
		return nil, nil
	}
	ss := make([]string, len(states))
	for i, s := range states {
		ss[i] = string(s)
	}
	var a args
	q := `SELECT ` + recordCols + ` FROM records r WHERE r.state = ANY(` + a.add(ss) + `::text[])`
	if tenant != "" {
		q += ` AND r.tenant = ` + a.add(tenant)
	}
	if after != "" {
		q += ` AND r.id > ` + a.add(after)
	}
	q += ` ORDER BY r.id LIMIT ` + a.add(max(limit, 0))
	return queryRecords(ctx, t.tx, q, a...)
}

// scanPage bounds the rows ScanRecords holds at once.
const scanPage = 1000

// ScanRecords calls fn for every record (of tenant, or of all tenants when
// tenant is ""), in id order. It reads in pages, so fn may use the
// transaction.
func (t *txn) ScanRecords(ctx context.Context, tenant string, fn func(*custody.Record) error) error {
	after := ""
	for {
		var a args
		q := `SELECT ` + recordCols + ` FROM records r WHERE r.id > ` + a.add(after)
		if tenant != "" {
			q += ` AND r.tenant = ` + a.add(tenant)
		}
		q += ` ORDER BY r.id LIMIT ` + a.add(scanPage)
		recs, err := queryRecords(ctx, t.tx, q, a...)
		if err != nil {
			return err
		}
		for _, r := range recs {
			if err := fn(r); err != nil {
				return err
			}
		}
		if len(recs) < scanPage {
			return nil
		}
		after = recs[len(recs)-1].ID
	}
}

// MisplacedEdge returns a record whose lineage edges disagree with its
// parents ("" if none): an edge that names no such parent of its child,
// another weight or tenant, or a parent with no edge.
func (t *txn) MisplacedEdge(ctx context.Context) (string, error) {
	var id string
	err := t.tx.QueryRow(ctx, `SELECT id FROM (
   SELECT e.child AS id FROM edges e LEFT JOIN records r ON r.id = e.child
    WHERE r.id IS NULL OR r.tenant <> e.tenant OR NOT EXISTS (SELECT 1 FROM jsonb_array_elements(r.parents::jsonb) p
      WHERE p ->> 'id' = e.parent AND (p ->> 'weight')::double precision = e.weight)
   UNION ALL
   SELECT r.id FROM records r, jsonb_array_elements(r.parents::jsonb) p
    WHERE NOT EXISTS (SELECT 1 FROM edges e WHERE e.parent = p ->> 'id' AND e.child = r.id)) x
 LIMIT 1`).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return id, classify(err)
}
