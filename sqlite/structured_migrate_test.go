package sqlite_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/sqlite"
)

// A store of schema 20 indexed a JSON body with its keys; opening it
// indexes that body again by its values (schema 23), so that a search
// ranked without the copy in memory (FTS5's matches) no longer finds it
// by a key, and still finds it by a value; prose holding the key's word
// is found as before.
func TestMigrateStructuredValues(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.db")
	noCopy := func(ctx context.Context, path string) (*sqlite.Store, error) {
		return sqlite.OpenWith(ctx, path, sqlite.Options{SearchMemory: -1})
	}
	st, key, svc, alice := serviceOn(t, dir, noCopy)
	ctx := t.Context()
	remember := func(body string) string {
		d, err := svc.Remember(ctx, alice, custody.Candidate{Namespace: "store", Class: custody.ClassFact, Body: body, Channel: custody.ChannelUser})
		if err != nil {
			t.Fatal(err)
		}
		return d.ID
	}
	doc := remember(`{"content": "quarterly figures", "kind": "report"}`)
	prose := remember("what kind of report is due")
	search := func(svc *custody.Service, q string) []string {
		res, err := svc.SearchRanked(ctx, alice, custody.SearchInput{Query: q, Mode: custody.ModeLexical})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, it := range res.Items {
			ids = append(ids, it.ID)
		}
		slices.Sort(ids)
		return ids
	}
	search(svc, "kind") // moves the records into the index
	st.Close()
	rewind(t, path, `DROP TRIGGER records_search_moved`, `DROP TABLE search_moved`,
		`DELETE FROM records_fts WHERE rowid = (SELECT rid FROM records WHERE id = '`+doc+`')`,
		`INSERT INTO records_fts (rowid, body, key) SELECT rid, 'content quarter figur kind report', '' FROM records WHERE id = '`+doc+`'`,
		`PRAGMA user_version = 20`)
	st, err := noCopy(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if svc, err = custody.New(st, key, custody.Options{}); err != nil {
		t.Fatal(err)
	}
	if got := search(svc, "kind"); !slices.Equal(got, []string{prose}) {
		t.Errorf("after the migration, %q = %v; want only the prose %s, not the JSON record %s by its key", "kind", got, prose, doc)
	}
	if got := search(svc, "quarterly"); !slices.Equal(got, []string{doc}) {
		t.Errorf("after the migration, %q = %v; want the JSON record %s by its value", "quarterly", got, doc)
	}
	// The index itself, which counts the records holding a word for every
	// score: the key is no longer a term of the JSON record.
	var n int
	if err := st.DB().QueryRowContext(ctx, `SELECT count(*) FROM records_fts WHERE records_fts MATCH '"kind"'`).Scan(&n); err != nil || n != 1 {
		t.Errorf("records_fts holds %q in %d rows (%v); want 1, the prose", "kind", n, err)
	}
}
