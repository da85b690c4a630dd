package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	custody "github.com/custody-mem/custody"
)

const recordCols = `r.rid, r.id, r.tenant, r.owner, r.namespace, r.key, r.class, r.body, r.channel, r.writer, r.source_ref,
 r.authority, r.audience, r.state, r.created_at, r.expires_at, r.version, r.log_index, r.policy_version, r.session,
 r.parents, r.erased, r.receipt, r.salt, r.metadata`

type scanner interface{ Scan(...any) error }

// A policy version is the SHA-256 of the policy's text in lowercase hex,
// and every record keeps the one it was decided under: the row stores
// its 32 bytes (schema 26), not the 64 digits. Any other text, and rows
// written before, keep the text.

// policyVersionArg is v as the row stores it.
func policyVersionArg(v string) any {
	if len(v) != 2*sha256.Size {
		return v
	}
	for i := range len(v) {
		if c := v[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return v
		}
	}
	b, _ := hex.DecodeString(v) // lowercase hex digits, checked above
	return b
}

// policyVersionCol scans a row's policy version, as stored by
// policyVersionArg, into v.
type policyVersionCol struct{ v *string }

func (c policyVersionCol) Scan(src any) error {
	switch x := src.(type) {
	case string:
		*c.v = x
	case []byte:
		*c.v = hex.EncodeToString(x)
	default:
		return fmt.Errorf("policy version: want text or a blob, got %T", src)
	}
	return nil
}

func scanRecord(sc scanner, extra ...any) (*custody.Record, int64, error) {
	var r custody.Record
	var rid, created int64
	var expires sql.NullInt64
	var parents, receipt, metadata string
	var erased int
	dest := []any{&rid, &r.ID, &r.Tenant, &r.Owner, &r.Namespace, &r.Key, &r.Class, &r.Body, &r.Channel, &r.Writer, &r.SourceRef,
		&r.Authority, &r.Audience, &r.State, &created, &expires, &r.Version, &r.LogIndex, policyVersionCol{&r.PolicyVersion}, &r.Session,
		&parents, &erased, &receipt, &r.Salt, &metadata}
	if err := sc.Scan(append(dest, extra...)...); err != nil {
		return nil, 0, err
	}
	r.CreatedAt = time.Unix(0, created).UTC()
	if expires.Valid {
		t := time.Unix(0, expires.Int64).UTC()
		r.ExpiresAt = &t
	}
	r.Erased = erased != 0
	if len(r.Salt) == 0 {
		r.Salt = nil
	}
	if err := json.Unmarshal([]byte(parents), &r.Parents); err != nil {
		return nil, 0, fmt.Errorf("record %s: parents: %w", r.ID, err)
	}
	if r.Parents == nil {
		r.Parents = []custody.Edge{}
	}
	m, err := custody.ParseMetadata(metadata)
	if err != nil {
		return nil, 0, fmt.Errorf("record %s: %w", r.ID, err)
	}
	r.Metadata = m
	rc, err := readReceipt(receipt, &r)
	if err != nil {
		return nil, 0, fmt.Errorf("record %s: receipt: %w", r.ID, err)
	}
	r.Receipt = rc
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

// saltArg is a record's salt as the column takes it: NOT NULL, so no salt
// is the empty blob.
func saltArg(salt []byte) []byte {
	if salt == nil {
		return []byte{}
	}
	return salt
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain structs are marshalled here
	}
	return string(b)
}

// eligible is the retrieval filter (design rule 4), for a record aliased r:
// tenant, audience, and eligibleRest. Its arguments come from eligibleArgs.
func eligible(groups int) string {
	return `r.tenant = ? AND (r.owner = ? OR r.audience = 'tenant'` + groupIn(groups) + `) AND ` + eligibleRest
}

// eligibleRest is the part of rule 4 that does not depend on the subject:
// admitted, not expired (one argument: now), and the newest admitted
// version of its key (the head column, kept by the schema's triggers).
const eligibleRest = `r.state = 'admitted' AND (r.expires_at IS NULL OR r.expires_at > ?) AND (r.key = '' OR r.head = 1)`

func eligibleArgs(s custody.Scope) []any {
	return append(append([]any{s.Tenant}, audienceArgs(s)...), s.Now.UnixNano())
}

// groupIn is the part of the audience condition for the subject's groups.
func groupIn(groups int) string {
	if groups == 0 {
		return ""
	}
	return " OR r.audience IN (" + placeholders(groups) + ")"
}

// audienceArgs are the arguments of the audience condition: the subject,
// then its groups.
func audienceArgs(s custody.Scope) []any {
	args := []any{s.Subject}
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
// records_ns_key. Any other list merges one walk per audience the subject
// can see — its own records (records_owner_id), the tenant's shared ones
// and each of its groups' (records_aud_id) — each newest first, filtered
// and cut at the limit before the merge, so a subject with few records in
// a large tenant reads about as many rows as it gets. Indexes are named:
// without statistics the planner walked every record of the tenant.
func (s *Store) List(ctx context.Context, sc custody.Scope, f custody.ListFilter) ([]*custody.Record, error) {
	if f.Namespace != "" && f.Key != "" {
		q, args := listBranch(sc, f, "records_ns_key", `r.key != '' AND (r.owner = ? OR r.audience = 'tenant'`+groupIn(len(sc.Groups))+`)`, audienceArgs(sc)...)
		return queryRecords(ctx, s.reader(), `SELECT `+recordCols+` FROM records r WHERE r.rid IN (SELECT rid FROM (`+q+`))
 ORDER BY r.id DESC`, args...)
	}
	branches := []string{}
	var args []any
	add := func(index, cond string, condArgs ...any) {
		q, a := listBranch(sc, f, index, cond, condArgs...)
		branches = append(branches, `SELECT rid FROM (`+q+`)`)
		args = append(args, a...)
	}
	add("records_owner_id", "r.owner = ?", sc.Subject)
	// records_aud_id is partial: its condition, spelled out, lets SQLite use it.
	add("records_aud_id", "r.audience = 'tenant' AND r.audience != 'owner'")
	for _, g := range sc.Groups {
		add("records_aud_id", "r.audience = ? AND r.audience != 'owner'", "group:"+g)
	}
	q := `SELECT ` + recordCols + ` FROM records r WHERE r.rid IN (` + strings.Join(branches, " UNION ALL ") + `)
 ORDER BY r.id DESC LIMIT ?`
	return queryRecords(ctx, s.reader(), q, append(args, f.Limit)...)
}

// listBranch is one walk of List: the records of tenant matching cond
// that are eligible in every other respect and pass the filter, newest
// first, at most f.Limit of them.
func listBranch(sc custody.Scope, f custody.ListFilter, index, cond string, condArgs ...any) (string, []any) {
	q := `SELECT r.rid FROM records r INDEXED BY ` + index + ` WHERE r.tenant = ? AND ` + cond + ` AND ` + eligibleRest
	args := append(append([]any{sc.Tenant}, condArgs...), sc.Now.UnixNano())
	if f.Namespace != "" {
		q += ` AND r.namespace = ?`
		args = append(args, f.Namespace)
	}
	if f.NamespacePrefix != "" {
		q += ` AND ` + underPrefix
		args = append(args, underArgs(f.NamespacePrefix)...)
	}
	if f.Key != "" {
		q += ` AND r.key = ?`
		args = append(args, f.Key)
	}
	if f.Class != "" {
		q += ` AND r.class = ?`
		args = append(args, string(f.Class))
	}
	fq, fargs := filterSQL(f.Filters)
	q, args = q+fq, append(args, fargs...)
	if f.After != "" {
		q += ` AND r.id < ?`
		args = append(args, f.After)
	}
	return q + ` ORDER BY r.id DESC LIMIT ?`, append(args, f.Limit)
}

// maxQueryTerms bounds the terms of one search.
const maxQueryTerms = 32

// Search ranks eligible records by BM25 over body and key, with the
// statistics of the records sc may retrieve: with the copy of the index
// in memory when it is ready (search_memory.go), from FTS5's matches
// until then (search_fts.go).
func (s *Store) Search(ctx context.Context, sc custody.Scope, q custody.SearchQuery) ([]custody.Scored, error) {
	match := ftsQuery(q.Text)
	if match == "" {
		return nil, nil
	}
	at, err := s.searchAt(ctx)
	if err != nil {
		return nil, unavailable(err)
	}
	return s.searchRanked(ctx, sc, q, at)
}

func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return custody.ErrNotFound
	}
	return err
}
