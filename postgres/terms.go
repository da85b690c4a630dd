package postgres

import (
	"context"
	"strconv"
	"strings"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/internal/lexical"
	"github.com/jackc/pgx/v5"
)

// The search vector is built here, from the terms of internal/lexical
// (English stems, no stopwords, identifiers whole), and cast to tsvector:
// no text search parser or configuration of the server touches it, so
// PostgreSQL matches the same records as SQLite for the same query
// (migration 008; before, to_tsvector('simple') split the raw text).

// tsvector bounds: positions run to 16383, and a lexeme keeps at most 256.
const (
	maxPosition  = 16383
	maxPositions = 256
)

// documentText is a record's search vector as tsvector input: each term of
// its body and key with its positions. An erased record has none.
func documentText(r *custody.Record) string {
	if r.Erased {
		return ""
	}
	terms := append(lexical.Document(r.Body), lexical.Document(r.Key)...)
	pos := make(map[string][]int, len(terms))
	var order []string
	for i, t := range terms {
		ps, seen := pos[t]
		if !seen {
			order = append(order, t)
		}
		if len(ps) < maxPositions {
			pos[t] = append(ps, min(i+1, maxPosition))
		}
	}
	var b strings.Builder
	for i, t := range order {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(quoteLexeme(t))
		for j, p := range pos[t] {
			if j == 0 {
				b.WriteByte(':')
			} else {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(p))
		}
	}
	return b.String()
}

// quoteLexeme quotes a term for tsvector or tsquery input, where it is
// then a lexeme as it stands, never an operator.
func quoteLexeme(t string) string {
	if strings.ContainsAny(t, `\'`) {
		t = lexemeQuotes.Replace(t)
	}
	return "'" + t + "'"
}

// lexemeQuotes escapes what a quoted lexeme cannot hold as it is.
var lexemeQuotes = strings.NewReplacer(`\`, `\\`, `'`, `''`)

// tsQuery turns plain text into tsquery input: its terms, quoted, OR-ed.
func tsQuery(text string) string {
	ts := lexical.Query(text, maxQueryTerms)
	for i, t := range ts {
		ts[i] = quoteLexeme(t)
	}
	return strings.Join(ts, " | ")
}

func init() {
	migrationSteps["lexical_metadata"] = researchVectors
	migrationSteps["structured_values"] = researchStructured
	migrationSteps["lexical_fold"] = researchVectors
}

// researchStructured rebuilds the search vector of every record whose
// body is a JSON object or array (migration 016): it now holds the terms
// of the values alone (lexical.Values). Other records' are as they were.
func researchStructured(ctx context.Context, tx pgx.Tx) error {
	return rewritePages(ctx, tx, func(ids []string, recs []*custody.Record) error {
		var changed, docs []string
		for i, r := range recs {
			if !r.Erased && lexical.Values(r.Body) != r.Body {
				changed, docs = append(changed, ids[i]), append(docs, documentText(r))
			}
		}
		if len(changed) == 0 {
			return nil
		}
		_, err := tx.Exec(ctx, `UPDATE records r SET search = x.doc::tsvector
 FROM unnest($1::text[], $2::text[]) AS x(id, doc) WHERE r.id = x.id`, changed, docs)
		return err
	})
}

// researchVectors rebuilds the search vector of every record of a database
// migrated to 008 or 021, a page at a time.
func researchVectors(ctx context.Context, tx pgx.Tx) error {
	return rewritePages(ctx, tx, func(ids []string, recs []*custody.Record) error {
		docs := make([]string, len(recs))
		for i, r := range recs {
			docs[i] = documentText(r)
		}
		_, err := tx.Exec(ctx, `UPDATE records r SET search = x.doc::tsvector
 FROM unnest($1::text[], $2::text[]) AS x(id, doc) WHERE r.id = x.id`, ids, docs)
		return err
	})
}

// rewritePages calls rewrite with every record (its id, the fields of its
// gate text and its erasure), scanPage at a time in id order, for a migration that writes a
// column computed in Go.
func rewritePages(ctx context.Context, tx pgx.Tx, rewrite func(ids []string, recs []*custody.Record) error) error {
	for after := ""; ; {
		rows, err := tx.Query(ctx, `SELECT id, body, key, namespace, source_ref, metadata, erased FROM records WHERE id > $1 ORDER BY id LIMIT $2`, after, scanPage)
		if err != nil {
			return err
		}
		var ids []string
		var recs []*custody.Record
		for rows.Next() {
			r := &custody.Record{}
			var meta string
			if err := rows.Scan(&r.ID, &r.Body, &r.Key, &r.Namespace, &r.SourceRef, &meta, &r.Erased); err != nil {
				rows.Close()
				return err
			}
			if r.Metadata, err = custody.ParseMetadata(meta); err != nil {
				rows.Close()
				return err
			}
			ids, recs = append(ids, r.ID), append(recs, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(ids) > 0 {
			if err := rewrite(ids, recs); err != nil {
				return err
			}
		}
		if len(ids) < scanPage {
			return nil
		}
		after = ids[len(ids)-1]
	}
}
