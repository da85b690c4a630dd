package sqlite

import (
	"context"
	"strings"
	"unicode/utf8"

	custody "github.com/custody-mem/custody"
)

// Mentioning finds the records of the scope's tenant that its subject owns
// or whose audience includes it, in any state, whose gate index text
// (custody.RecordGateIndex) contains q.Text, newest first and at most
// q.Limit of them. The audience is tested in the same query, so however
// many records other users write that mention a value, the subject's own
// are all found.
//
// Both indexes hold a record's gate index text. A text of three
// characters or more is looked up in records_tri, which gives the records
// holding every trigram of it, and in index_pending (which holds the text
// lowercased, as records_tri folds it: instr on it is the substring test).
// Each record records_tri gives is kept if its own index text holds the
// text: the index keeps no positions, so "abcde" finds "abcdbcde" there
// (abc, bcd and cde are all in it), and the test leaves it out. A shorter
// text, which a trigram index cannot look up, is looked for in the text of
// the subject's records, read through the same indexes as List.
func (t *txn) Mentioning(ctx context.Context, s custody.Scope, q custody.MentionQuery) ([]*custody.Record, error) {
	text := q.Text
	if text == "" || strings.ContainsRune(text, 0) || !utf8.ValidString(text) {
		return nil, nil // no record holds a NUL or invalid UTF-8
	}
	if utf8.RuneCountInString(text) < 3 {
		return t.mentioningShort(ctx, s, q)
	}
	lower := strings.ToLower(text)
	inForce, args := inForceCond(q)
	// (A rid is in one of the two, never both. CROSS JOIN keeps SQLite
	// from walking the tenant's records to test each against the matches.)
	return keptRecords(ctx, t, `SELECT `+recordCols+` FROM (
   SELECT rowid AS rid FROM records_tri WHERE records_tri MATCH ?
   UNION ALL SELECT rid FROM index_pending WHERE instr(norm, ?) > 0) m
 CROSS JOIN records r ON r.rid = m.rid
 WHERE r.tenant = ? AND (r.owner = ? OR r.audience = 'tenant'`+groupIn(len(s.Groups))+`)`+inForce+`
 ORDER BY r.id DESC`, append(append([]any{trigramQuery(lower), lower, s.Tenant}, audienceArgs(s)...), args...), q.Limit,
		func(r *custody.Record) bool { return strings.Contains(custody.RecordGateIndex(r), lower) })
}

// inForceCond is the condition (and its argument) of q.InForceFrom on
// records r.
func inForceCond(q custody.MentionQuery) (string, []any) {
	if q.InForceFrom == 0 {
		return "", nil
	}
	return ` AND r.state = 'admitted' AND r.authority >= ?`, []any{int(q.InForceFrom)}
}

// keptRecords reads the records query gives, in its order, and lists those
// keep keeps, at most limit of them (0: all) and reading no further.
func keptRecords(ctx context.Context, t *txn, query string, args []any, limit int, keep func(*custody.Record) bool) ([]*custody.Record, error) {
	rows, err := t.QueryContext(ctx, query, args...)
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
		if keep(r) {
			if out = append(out, r); len(out) == limit {
				break
			}
		}
	}
	return out, rows.Err()
}

// maxTrigrams bounds the trigrams a lookup asks records_tri for: the
// records holding some of a text's trigrams hold all of them and more,
// and each is tested for the text itself.
const maxTrigrams = 16

// trigramQuery is the FTS5 query for the records holding every trigram of
// text (three characters or more), at most maxTrigrams of them spread
// over it, first and last included: each a quoted string of three
// characters, which the trigram tokenizer makes one token (detail=none
// refuses a phrase of more).
func trigramQuery(text string) string {
	runes := []rune(text)
	n := len(runes) - 2
	picked := make([]string, 0, min(n, maxTrigrams))
	seen := map[string]bool{}
	for k := range min(n, maxTrigrams) {
		i := k
		if n > maxTrigrams {
			i = k * (n - 1) / (maxTrigrams - 1)
		}
		g := string(runes[i : i+3])
		if !seen[g] {
			seen[g] = true
			picked = append(picked, `"`+strings.ReplaceAll(g, `"`, `""`)+`"`)
		}
	}
	return strings.Join(picked, " AND ")
}

// mentioningShort reads the gate fields of each of the subject's records
// (its own and those of its audiences), newest first, keeps those whose
// gate index text contains text, and reads them whole. No filter on the
// raw fields narrows it: a field may spell a digit in another script, or
// a number in words, that its index text holds as ASCII.
func (t *txn) mentioningShort(ctx context.Context, s custody.Scope, q custody.MentionQuery) ([]*custody.Record, error) {
	text := strings.ToLower(q.Text)
	inForce, fargs := inForceCond(q)
	inForce = strings.ReplaceAll(inForce, "r.", "")
	const cols = `rid, body, key, namespace, source_ref, metadata, erased, id`
	branches := []string{`SELECT ` + cols + ` FROM records INDEXED BY records_owner_id WHERE tenant = ? AND owner = ?` + inForce}
	args := append([]any{s.Tenant, s.Subject}, fargs...)
	// records_aud_id is partial: its condition, spelled out, lets SQLite use it.
	for _, aud := range append([]string{custody.AudienceTenant}, groupAudiences(s)...) {
		branches = append(branches, `SELECT `+cols+` FROM records INDEXED BY records_aud_id
 WHERE tenant = ? AND audience = ? AND audience != 'owner'`+inForce)
		args = append(append(args, s.Tenant, aud), fargs...)
	}
	rows, err := t.QueryContext(ctx, `SELECT `+cols+` FROM (`+strings.Join(branches, " UNION ALL ")+`) ORDER BY id DESC`, args...)
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	var rids []int64
	for rows.Next() {
		var rid int64
		var r custody.Record
		var meta string
		if err := rows.Scan(&rid, &r.Body, &r.Key, &r.Namespace, &r.SourceRef, &meta, &r.Erased, &r.ID); err != nil {
			return nil, err
		}
		if r.Metadata, err = custody.ParseMetadata(meta); err != nil {
			return nil, err
		}
		if strings.Contains(custody.RecordGateIndex(&r), text) {
			if rids = append(rids, rid); len(rids) == q.Limit {
				break
			}
		}
	}
	if err := rows.Err(); err != nil || len(rids) == 0 {
		return nil, err
	}
	return queryRecords(ctx, t, `SELECT `+recordCols+` FROM records r WHERE r.rid IN (SELECT value FROM json_each(?))
 ORDER BY r.id DESC`, jsonText(rids))
}

// groupAudiences are the audiences of the subject's groups.
func groupAudiences(s custody.Scope) []string {
	out := make([]string, len(s.Groups))
	for i, g := range s.Groups {
		out[i] = "group:" + g
	}
	return out
}
