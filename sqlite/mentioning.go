package sqlite

import (
	"context"
	"slices"
	"strings"
	"unicode/utf8"

	custody "github.com/custody-mem/custody"
)

// Mentioning finds the records of the scope's tenant that its subject owns
// or whose audience includes it, in any state, whose gate text contains
// text. The audience is tested in the same query and nothing is cut, so
// however many records other users write that mention a value, the
// subject's own are all found.
//
// Both indexes hold a record's custody.GateIndexText: its gate text and
// the markers of its short numbers. A text of three characters or more is
// looked up in records_tri, which gives the records holding every trigram
// of it, and in index_pending (which holds the text lowercased, as
// records_tri folds it: instr on it is the substring test). Each record
// records_tri gives is kept if its own index text holds text, lowercased: the index keeps no positions, so
// "abcde" finds "abcdbcde" there (abc, bcd and cde are all in it), and the
// test leaves it out. A shorter text, which a trigram index cannot look
// up, is looked for in the text of the subject's records, read through
// the same indexes as List.
func (t *txn) Mentioning(ctx context.Context, s custody.Scope, text string) ([]*custody.Record, error) {
	if text == "" || strings.ContainsRune(text, 0) || !utf8.ValidString(text) {
		return nil, nil // no record holds a NUL or invalid UTF-8
	}
	if utf8.RuneCountInString(text) < 3 {
		return t.mentioningShort(ctx, s, text)
	}
	lower := strings.ToLower(text)
	// (A rid is in one of the two, never both. CROSS JOIN keeps SQLite
	// from walking the tenant's records to test each against the matches.)
	recs, err := queryRecords(ctx, t, `SELECT `+recordCols+` FROM (
   SELECT rowid AS rid FROM records_tri WHERE records_tri MATCH ?
   UNION ALL SELECT rid FROM index_pending WHERE instr(norm, ?) > 0) m
 CROSS JOIN records r ON r.rid = m.rid
 WHERE r.tenant = ? AND (r.owner = ? OR r.audience = 'tenant'`+groupIn(len(s.Groups))+`)
 ORDER BY r.id DESC`, append([]any{trigramQuery(lower), lower, s.Tenant}, audienceArgs(s)...)...)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(recs, func(r *custody.Record) bool {
		return !strings.Contains(custody.GateIndexText(r.Body, r.Key), lower)
	}), nil
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

// mentioningShort reads the body and key of each of the subject's records
// (those of its audiences), keeps those whose gate text contains text, and
// reads them whole. Where text holds a character that neither case folding
// nor the gate's normalisation changes (a digit, most punctuation), only
// records whose body or key hold it are read.
func (t *txn) mentioningShort(ctx context.Context, s custody.Scope, text string) ([]*custody.Record, error) {
	text = strings.ToLower(text)
	filter, fargs := "", []any{}
	for _, r := range text {
		if r < utf8.RuneSelf && !('a' <= r && r <= 'z') && !('A' <= r && r <= 'Z') {
			filter = ` AND (instr(body, ?) > 0 OR instr(key, ?) > 0)`
			fargs = []any{string(r), string(r)}
			break
		}
	}
	branches := []string{`SELECT rid, body, key, erased FROM records INDEXED BY records_owner_id WHERE tenant = ? AND owner = ?` + filter}
	args := append([]any{s.Tenant, s.Subject}, fargs...)
	// records_aud_id is partial: its condition, spelled out, lets SQLite use it.
	for _, aud := range append([]string{custody.AudienceTenant}, groupAudiences(s)...) {
		branches = append(branches, `SELECT rid, body, key, erased FROM records INDEXED BY records_aud_id
 WHERE tenant = ? AND audience = ? AND audience != 'owner'`+filter)
		args = append(append(args, s.Tenant, aud), fargs...)
	}
	rows, err := t.QueryContext(ctx, strings.Join(branches, " UNION ALL "), args...)
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	var rids []int64
	for rows.Next() {
		var rid int64
		var body, key string
		var erased bool
		if err := rows.Scan(&rid, &body, &key, &erased); err != nil {
			return nil, err
		}
		if !erased && strings.Contains(strings.ToLower(custody.GateText(body, key)), text) {
			rids = append(rids, rid)
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
