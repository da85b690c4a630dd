package postgres_test

import (
	"errors"
	"testing"

	custody "github.com/custody-mem/custody"
)

// A database from before migration 020 holds the built-in embedder's
// vectors, which custody no longer stores; the migration deletes them and
// keeps the vectors of any other model.
func TestMigrateStaticVectors(t *testing.T) {
	ctx := t.Context()
	m := newMigration(t)
	dsn, service, st, alice, fact := m.dsn, m.service, m.st, m.alice, m.fact
	builtin, openai := fact("I like short answers"), fact("the garden needs watering")
	mustExec(t, st, `DELETE FROM schema_migrations WHERE version >= 20`)
	if err := st.PutVectors(ctx, "builtin-wordnet3.0-ri1-512", []custody.RecordVector{{Tenant: alice.Tenant(), ID: builtin, Vec: make([]float32, 512)}}); err != nil {
		t.Fatal(err)
	}
	if err := st.PutVectors(ctx, "openai:text-embedding-3-small:8", []custody.RecordVector{{Tenant: alice.Tenant(), ID: openai, Vec: make([]float32, 8)}}); err != nil {
		t.Fatal(err)
	}
	st = openDSN(t, dsn) // migrates
	if model, _, err := st.VectorOf(ctx, alice.Tenant(), builtin); !errors.Is(err, custody.ErrNotFound) {
		t.Errorf("after migration 020 the built-in embedder's vector of %s is still stored (%q, %v)", builtin, model, err)
	}
	if _, dim, err := st.VectorOf(ctx, alice.Tenant(), openai); err != nil || dim != 8 {
		t.Errorf("after migration 020 the openai vector of %s: %d %v; want it kept", openai, dim, err)
	}
	expectVerify(t, service(st), "")
}
