package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	custody "github.com/custody-mem/custody"
)

const recordCols = `r.rid, r.id, r.tenant, r.owner, r.namespace, r.key, r.class, r.body, r.channel, r.writer, r.source_ref,
 r.authority, r.audience, r.state, r.created_at, r.expires_at, r.version, r.log_index, r.policy_version, r.session,
 r.parents, r.erased, r.receipt`

type scanner interface{ Scan(...any) error }

func scanRecord(sc scanner, extra ...any) (*custody.Record, int64, error) {
	var r custody.Record
	var rid, created int64
	var expires sql.NullInt64
	var parents, receipt string
	var erased int
	dest := []any{&rid, &r.ID, &r.Tenant, &r.Owner, &r.Namespace, &r.Key, &r.Class, &r.Body, &r.Channel, &r.Writer, &r.SourceRef,
		&r.Authority, &r.Audience, &r.State, &created, &expires, &r.Version, &r.LogIndex, &r.PolicyVersion, &r.Session,
		&parents, &erased, &receipt}
	if err := sc.Scan(append(dest, extra...)...); err != nil {
		return nil, 0, err
	}
	r.CreatedAt = time.Unix(0, created).UTC()
	if expires.Valid {
		t := time.Unix(0, expires.Int64).UTC()
		r.ExpiresAt = &t
	}
	r.Erased = erased != 0
	if err := json.Unmarshal([]byte(parents), &r.Parents); err != nil {
		return nil, 0, fmt.Errorf("record %s: parents: %w", r.ID, err)
	}
	if receipt != "" && receipt != "null" {
		r.Receipt = new(custody.Receipt)
		if err := json.Unmarshal([]byte(receipt), r.Receipt); err != nil {
			return nil, 0, fmt.Errorf("record %s: receipt: %w", r.ID, err)
		}
	}
	if r.Parents == nil {
		r.Parents = []custody.Edge{}
	}
	return &r, rid, nil
}

func queryRecords(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, query string, args ...any) ([]*custody.Record, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	var out []*custody.Record
	for rows.Next() {
		r, _, err := scanRecord(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func nullTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixNano()
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain structs are marshalled here
	}
	return string(b)
}

// eligible is the retrieval filter (design rule 4), for a record aliased r:
// tenant, state, expiry, audience, and newest admitted version of its key
// (the head column, kept by the schema's triggers).
// Its arguments come from eligibleArgs.
func eligible(groups int) string {
	in := ""
	if groups > 0 {
		in = " OR r.audience IN (" + strings.TrimSuffix(strings.Repeat("?,", groups), ",") + ")"
	}
	return `r.tenant = ? AND r.state = 'admitted' AND (r.expires_at IS NULL OR r.expires_at > ?)
 AND (r.owner = ? OR r.audience = 'tenant'` + in + `) AND (r.key = '' OR r.head = 1)`
}

func eligibleArgs(s custody.Scope) []any {
	args := []any{s.Tenant, s.Now.UnixNano(), s.Subject}
	for _, g := range s.Groups {
		args = append(args, "group:"+g)
	}
	return args
}

// Get returns an eligible record.
func (s *Store) Get(ctx context.Context, sc custody.Scope, id string) (*custody.Record, error) {
	recs, err := queryRecords(ctx, s.reader(), `SELECT `+recordCols+` FROM records r WHERE r.id = ? AND `+eligible(len(sc.Groups)),
		append([]any{id}, eligibleArgs(sc)...)...)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, custody.ErrNotFound
	}
	return recs[0], nil
}

// List returns eligible records, newest first.
//
// A list by namespace and key reads that key's versions through
// records_ns_key; any other list walks records_state newest first. Both are
// named, as the planner (without statistics) chose the walk for a key too,
// which reached an old key only after every newer record.
func (s *Store) List(ctx context.Context, sc custody.Scope, f custody.ListFilter) ([]*custody.Record, error) {
	index := "records_state"
	if f.Namespace != "" && f.Key != "" {
		index = "records_ns_key"
	}
	q := `SELECT ` + recordCols + ` FROM records r INDEXED BY ` + index + ` WHERE ` + eligible(len(sc.Groups))
	args := eligibleArgs(sc)
	if f.Namespace != "" {
		q += ` AND r.namespace = ?`
		args = append(args, f.Namespace)
	}
	if f.Key != "" {
		q += ` AND r.key = ?`
		args = append(args, f.Key)
	}
	if f.Class != "" {
		q += ` AND r.class = ?`
		args = append(args, string(f.Class))
	}
	if f.After != "" {
		q += ` AND r.id < ?`
		args = append(args, f.After)
	}
	q += ` ORDER BY r.id DESC LIMIT ?`
	return queryRecords(ctx, s.reader(), q, append(args, f.Limit)...)
}

var wordRE = regexp.MustCompile(`[\p{L}\p{N}]+`)

// maxQueryTerms bounds the terms of one search.
const maxQueryTerms = 32

// ftsQuery turns plain text into an FTS5 query of quoted terms (OR), so no
// character of the input is ever FTS syntax.
func ftsQuery(text string) string {
	words := wordRE.FindAllString(strings.ToLower(text), maxQueryTerms)
	if len(words) == 0 {
		return ""
	}
	terms := make([]string, len(words))
	for i, w := range words {
		terms[i] = `"` + w + `"`
	}
	return `{body key} : (` + strings.Join(terms, " OR ") + `)`
}

// Search ranks eligible records by bm25 over body and key.
func (s *Store) Search(ctx context.Context, sc custody.Scope, q custody.SearchQuery) ([]custody.Scored, error) {
	match := ftsQuery(q.Text)
	if match == "" {
		return nil, nil
	}
	query := `SELECT ` + recordCols + `, bm25(records_fts, 1.0, 0.5) AS score
 FROM records_fts JOIN records r ON r.rid = records_fts.rowid
 WHERE records_fts MATCH ? AND ` + eligible(len(sc.Groups))
	args := append([]any{match}, eligibleArgs(sc)...)
	if q.Namespace != "" {
		query += ` AND r.namespace = ?`
		args = append(args, q.Namespace)
	}
	if q.Class != "" {
		query += ` AND r.class = ?`
		args = append(args, string(q.Class))
	}
	query += ` ORDER BY score LIMIT ?`
	rows, err := s.reader().QueryContext(ctx, query, append(args, q.Limit)...)
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	var out []custody.Scored
	for rows.Next() {
		var score float64
		r, _, err := scanRecord(rows, &score)
		if err != nil {
			return nil, err
		}
		out = append(out, custody.Scored{Record: r, Score: -score})
	}
	return out, rows.Err()
}

func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return custody.ErrNotFound
	}
	return err
}
