package sqlite_test

import (
	"errors"
	"path/filepath"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/sqlite"
)

// A store of schema 26 holds the built-in embedder's vectors, which it
// no longer stores; opening it deletes them (schema 27) and keeps the
// vectors of any other model.
func TestMigrateStaticVectors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.db")
	st, _, svc, alice := serviceOn(t, dir, sqlite.Open)
	ctx := t.Context()
	var ids []string
	for _, body := range []string{"I like short answers", "the garden needs watering"} {
		d, err := svc.Remember(ctx, alice, custody.Candidate{Namespace: "n", Class: custody.ClassFact, Body: body, Channel: custody.ChannelUser})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, d.ID)
	}
	if err := st.PutVectors(ctx, "builtin-wordnet3.0-ri1-512", []custody.RecordVector{{Tenant: "acme", ID: ids[0], Vec: make([]float32, 512)}}); err != nil {
		t.Fatal(err)
	}
	if err := st.PutVectors(ctx, "openai:text-embedding-3-small:8", []custody.RecordVector{{Tenant: "acme", ID: ids[1], Vec: make([]float32, 8)}}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	rewind(t, path, `PRAGMA user_version = 26`)
	st = reopen(t, path, 26)
	if model, _, err := st.VectorOf(ctx, "acme", ids[0]); !errors.Is(err, custody.ErrNotFound) {
		t.Errorf("after schema 27 the built-in embedder's vector of %s is still stored (%q, %v)", ids[0], model, err)
	}
	if model, dim, err := st.VectorOf(ctx, "acme", ids[1]); err != nil || dim != 8 {
		t.Errorf("after schema 27 the openai vector of %s: %q %d %v; want it kept", ids[1], model, dim, err)
	}
}
