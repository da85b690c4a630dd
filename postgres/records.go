package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/jackc/pgx/v5"
)

const recordCols = `r.id, r.tenant, r.owner, r.namespace, r.key, r.class, r.body, r.channel, r.writer, r.source_ref,
 r.authority, r.audience, r.state, r.created_at, r.expires_at, r.version, r.log_index, r.policy_version, r.session,
 r.parents, r.erased, r.receipt, r.salt, r.metadata`

// querier is what record reads need: a transaction or the pool.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func scanRecord(row pgx.Row, extra ...any) (*custody.Record, error) {
	var r custody.Record
	var class, state string
	var authority int16
	var created int64
	var expires *int64
	var parents, receipt, metadata string
	dest := []any{&r.ID, &r.Tenant, &r.Owner, &r.Namespace, &r.Key, &class, &r.Body, &r.Channel, &r.Writer, &r.SourceRef,
		&authority, &r.Audience, &state, &created, &expires, &r.Version, &r.LogIndex, &r.PolicyVersion, &r.Session,
		&parents, &r.Erased, &receipt, &r.Salt, &metadata}
	if err := row.Scan(append(dest, extra...)...); err != nil {
		return nil, err
	}
	r.Class, r.State, r.Authority = custody.Class(class), custody.State(state), custody.Authority(authority)
	if len(r.Salt) == 0 {
		r.Salt = nil
	}
	r.CreatedAt = time.Unix(0, created).UTC()
	if expires != nil {
		t := time.Unix(0, *expires).UTC()
		r.ExpiresAt = &t
	}
	if err := json.Unmarshal([]byte(parents), &r.Parents); err != nil {
		return nil, fmt.Errorf("record %s: parents: %w", r.ID, err)
	}
	if r.Parents == nil {
		r.Parents = []custody.Edge{}
	}
	m, err := custody.ParseMetadata(metadata)
	if err != nil {
		return nil, fmt.Errorf("record %s: %w", r.ID, err)
	}
	r.Metadata = m
	if receipt != "" && receipt != "null" {
		r.Receipt = new(custody.Receipt)
		if err := json.Unmarshal([]byte(receipt), r.Receipt); err != nil {
			return nil, fmt.Errorf("record %s: receipt: %w", r.ID, err)
		}
	}
	return &r, nil
}

// saltArg is a record's salt as the column takes it: NOT NULL, so no salt
// is the empty bytea.
func saltArg(salt []byte) []byte {
	if salt == nil {
		return []byte{}
	}
	return salt
}

func queryRecords(ctx context.Context, q querier, query string, args ...any) ([]*custody.Record, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	var out []*custody.Record
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return nil, classify(err)
		}
		out = append(out, r)
	}
	return out, classify(rows.Err())
}

// Times are stored as Unix nanoseconds, which reach from 1677 to 2262.
var (
	minTime = time.Unix(0, math.MinInt64).UTC()
	maxTime = time.Unix(0, math.MaxInt64).UTC()
)

// nanos is t in Unix nanoseconds; a time the column cannot hold is invalid
// input rather than a silently wrapped number.
func nanos(what string, t time.Time) (int64, error) {
	if t.Before(minTime) || t.After(maxTime) {
		return 0, &custody.Error{Kind: custody.ErrInvalid, Field: what,
			Msg: fmt.Sprintf("%s %s is out of range: custody stores times from %d to %d", what, t.UTC().Format(time.RFC3339), minTime.Year()+1, maxTime.Year()-1)}
	}
	return t.UnixNano(), nil
}

func nullNanos(what string, t *time.Time) (*int64, error) {
	if t == nil {
		return nil, nil
	}
	n, err := nanos(what, *t)
	return &n, err
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain structs are marshalled here
	}
	return string(b)
}

// receiptText is a receipt column: r as encoding/json marshals it,
// written without reflection (custody.Receipt.AppendJSON).
func receiptText(r *custody.Receipt) string {
	if b, ok := r.AppendJSON(make([]byte, 0, 256)); ok {
		return string(b)
	}
	return jsonText(r)
}

// args numbers query parameters as they are added.
type args []any

func (a *args) add(v any) string {
	*a = append(*a, v)
	return "$" + strconv.Itoa(len(*a))
}

// eligible is the retrieval filter (design rule 4) for a record aliased r:
// tenant, state, expiry, audience, and newest admitted version of its key.
func eligible(a *args, s custody.Scope) string {
	groups := make([]string, len(s.Groups))
	for i, g := range s.Groups {
		groups[i] = "group:" + g
	}
	return `r.tenant = ` + a.add(s.Tenant) + ` AND r.state = 'admitted'
 AND (r.expires_at IS NULL OR r.expires_at > ` + a.add(s.Now.UnixNano()) + `)
 AND (r.owner = ` + a.add(s.Subject) + ` OR r.audience = 'tenant' OR r.audience = ANY(` + a.add(groups) + `::text[]))
 AND (r.key = '' OR NOT EXISTS (SELECT 1 FROM records n WHERE n.tenant = r.tenant AND n.owner = r.owner
   AND n.namespace = r.namespace AND n.key = r.key AND n.version > r.version AND n.state = 'admitted'))`
}

// Get returns an eligible record.
func (s *Store) Get(ctx context.Context, sc custody.Scope, id string) (*custody.Record, error) {
	if !storable(id, sc.Tenant, sc.Subject) {
		return nil, custody.ErrNotFound
	}
	var a args
	q := `SELECT ` + recordCols + ` FROM records r WHERE r.id = ` + a.add(id) + ` AND ` + eligible(&a, sc)
	recs, err := queryRecords(ctx, s.pool, q, a...)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, custody.ErrNotFound
	}
	return recs[0], nil
}

// List returns eligible records, newest first.
func (s *Store) List(ctx context.Context, sc custody.Scope, f custody.ListFilter) ([]*custody.Record, error) {
	if !storable(sc.Tenant, sc.Subject, f.Namespace, f.NamespacePrefix, f.Key, string(f.Class), f.After) || !storable(sc.Groups...) {
		return nil, nil
	}
	var a args
	q := `SELECT ` + recordCols + ` FROM records r WHERE ` + eligible(&a, sc)
	if f.Namespace != "" {
		q += ` AND r.namespace = ` + a.add(f.Namespace)
	}
	if f.NamespacePrefix != "" {
		q += ` AND ` + underPrefix(a.add(f.NamespacePrefix))
	}
	if f.Key != "" {
		q += ` AND r.key = ` + a.add(f.Key)
	}
	if f.Class != "" {
		q += ` AND r.class = ` + a.add(string(f.Class))
	}
	q += filterSQL(&a, f.Filters)
	if f.After != "" {
		q += ` AND r.id < ` + a.add(f.After)
	}
	q += ` ORDER BY r.id DESC LIMIT ` + a.add(max(f.Limit, 0))
	return queryRecords(ctx, s.pool, q, a...)
}

// maxQueryTerms bounds the terms of one search.
const maxQueryTerms = 32

func init() {
	migrationSteps["gate_numbers"] = renormRecords
	migrationSteps["gate_canon"] = renormRecords
}

// renormRecords writes the norm of every record of a database older
// than migration 013 anew (normText; an erased record's stays empty).
func renormRecords(ctx context.Context, tx pgx.Tx) error {
	return rewritePages(ctx, tx, func(ids []string, recs []*custody.Record) error {
		norms := make([]string, len(recs))
		for i, r := range recs {
			norms[i] = normText(r)
		}
		_, err := tx.Exec(ctx, `UPDATE records r SET norm = x.norm
 FROM unnest($1::text[], $2::text[]) AS x(id, norm) WHERE r.id = x.id AND r.norm IS DISTINCT FROM x.norm`, ids, norms)
		return err
	})
}

// normText is a record's gate index text for the gate's substring lookups
// (custody.RecordGateIndex).
func normText(r *custody.Record) string {
	if r.Erased {
		return ""
	}
	return custody.RecordGateIndex(r)
}

// Search ranks eligible records by BM25 over body and key, with the
// tenant's copy of the search terms in memory (search_copy.go), or by
// ts_rank_cd while the copy cannot rank.
func (s *Store) Search(ctx context.Context, sc custody.Scope, q custody.SearchQuery) ([]custody.Scored, error) {
	tsq := tsQuery(q.Text)
	if tsq == "" || !storable(sc.Tenant, sc.Subject, q.Namespace, q.NamespacePrefix, string(q.Class)) || !storable(sc.Groups...) {
		return nil, nil
	}
	if out, ok, err := s.searchCopy(ctx, sc, q); ok || err != nil {
		return out, err
	}
	var a args
	query := `SELECT ` + recordCols + `, ts_rank_cd(r.search, q, 1) AS score
 FROM records r, (SELECT ` + a.add(tsq) + `::text::tsquery) AS x(q)
 WHERE r.search @@ q AND ` + searchFilter(&a, sc, q)
	query += ` ORDER BY score DESC, r.id DESC LIMIT ` + a.add(max(q.Limit, 0))
	rows, err := s.pool.Query(ctx, query, a...)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	var out []custody.Scored
	for rows.Next() {
		var score float32
		r, err := scanRecord(rows, &score)
		if err != nil {
			return nil, classify(err)
		}
		out = append(out, custody.Scored{Record: r, Score: float64(score)})
	}
	return out, classify(rows.Err())
}

func notFound(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return custody.ErrNotFound
	}
	return classify(err)
}
