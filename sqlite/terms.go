package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strings"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/internal/lexical"
	msqlite "modernc.org/sqlite"
)

// termsFunc is the SQL function that gives the search index a text's
// terms (internal/lexical), space-separated: records_fts is filled with
// custody_terms(body) and custody_terms(key), and its tokenizer only splits
// them at the spaces (schema 14; before, FTS5's unicode61 split the raw
// text itself, with no stemming and no identifiers).
const termsFunc = "custody_terms"

// gateTextFunc is the SQL function that gives the gate's trigram index a
// record's text, custody_gate_text(body, key, namespace, source_ref,
// metadata) (custody.RecordGateIndex), for the migrations that fill
// records_tri anew (schemas 20 and 21).
const gateTextFunc = "custody_gate_text"

// gateTextArgs are the arguments of gateTextFunc from a records row r.
const gateTextArgs = `r.body, r.key, r.namespace, r.source_ref, r.metadata`

func init() {
	msqlite.MustRegisterDeterministicScalarFunction(gateTextFunc, 5, func(_ *msqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		var text [5]string
		for i, a := range args {
			switch v := a.(type) {
			case string:
				text[i] = v
			case []byte:
				text[i] = string(v)
			case nil:
			default:
				return nil, fmt.Errorf("%s: want text, got %T", gateTextFunc, v)
			}
		}
		m, err := custody.ParseMetadata(text[4])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", gateTextFunc, err)
		}
		return custody.RecordGateIndex(&custody.Record{Body: text[0], Key: text[1], Namespace: text[2], SourceRef: text[3], Metadata: m}), nil
	})
	msqlite.MustRegisterDeterministicScalarFunction(termsFunc, 1, func(_ *msqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		switch v := args[0].(type) {
		case string:
			return strings.Join(lexical.Document(v), " "), nil
		case []byte:
			return strings.Join(lexical.Document(string(v)), " "), nil
		case nil:
			return "", nil
		default:
			return nil, fmt.Errorf("%s: want text, got %T", termsFunc, v)
		}
	})
}

// ftsQuery turns plain text into an FTS5 query of quoted terms (OR), so no
// character of the input is ever FTS syntax: a term holds letters, digits
// and the joiners of an identifier, never a quote.
func ftsQuery(text string) string {
	terms := lexical.Query(text, maxQueryTerms)
	if len(terms) == 0 {
		return ""
	}
	for i, w := range terms {
		terms[i] = `"` + w + `"`
	}
	return `{body key} : (` + strings.Join(terms, " OR ") + `)`
}

// dropFTS drops the search index of a database older than schema 14 (and
// adds records.metadata), so that schema.sql creates both anew.
func dropFTS(ctx context.Context, tx *sql.Tx) error {
	var hasMeta int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM pragma_table_info('records') WHERE name = 'metadata'`).Scan(&hasMeta); err != nil {
		return err
	}
	if hasMeta == 0 {
		if _, err := tx.ExecContext(ctx, `ALTER TABLE records ADD COLUMN metadata TEXT NOT NULL DEFAULT ''`); err != nil {
			return err
		}
	}
	_, err := tx.ExecContext(ctx, `DROP TABLE IF EXISTS records_fts`)
	return err
}

// reindexFTS fills a new search index with the terms of every live record
// that is not waiting in index_pending (which the writer moves in later).
func reindexFTS(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO records_fts (rowid, body, key)
 SELECT r.rid, `+termsFunc+`(r.body), `+termsFunc+`(r.key) FROM records r
 WHERE NOT r.erased AND NOT EXISTS (SELECT 1 FROM index_pending p WHERE p.rid = r.rid) ORDER BY r.rid`)
	return err
}

// reindexTri fills a new gate trigram index with the text of every live
// record that is not waiting in index_pending (which the writer moves in
// later), as the writer would have, gives the waiting ones the same text,
// and returns how many it indexed.
func reindexTri(ctx context.Context, tx *sql.Tx) (int64, error) {
	if _, err := tx.ExecContext(ctx, `UPDATE index_pending SET norm = (SELECT `+gateTextFunc+`(`+gateTextArgs+`) FROM records r WHERE r.rid = index_pending.rid)`); err != nil {
		return 0, err
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO records_tri (rowid, norm)
 SELECT r.rid, `+gateTextFunc+`(`+gateTextArgs+`) FROM records r
 WHERE NOT r.erased AND NOT EXISTS (SELECT 1 FROM index_pending p WHERE p.rid = r.rid) ORDER BY r.rid`)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
