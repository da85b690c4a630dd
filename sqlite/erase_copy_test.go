package sqlite_test

import (
	"path/filepath"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/storetest"
)

// An erasure takes the record's terms out of the in-memory copy of the
// search index, as out of FTS5: a word only the erased body held is in no
// record of the copy, and a word of a kept record is still there (the
// twin). (postgres TestSearchCopyAcrossServers checks the same of its
// copies.)
func TestErasureLeavesTheSearchCopy(t *testing.T) {
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := storetest.NewService(t, st, storetest.NewClock(storetest.Start))
	p, _, err := svc.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: "alice", Roles: []string{"user"}})
	if err != nil {
		t.Fatal(err)
	}
	alice := &custody.Caller{Principal: p, Subject: p}
	gone, err := svc.Remember(ctx, alice, custody.Candidate{Namespace: "n", Class: custody.ClassFact, Body: "the vault code is Xylocarpine", Channel: "user"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Remember(ctx, alice, custody.Candidate{Namespace: "n", Class: custody.ClassFact, Body: "the garden gate is Tamarillo", Channel: "user"}); err != nil {
		t.Fatal(err)
	}
	if res, err := svc.Search(ctx, alice, custody.SearchInput{Query: "Xylocarpine"}); err != nil || len(res) != 1 {
		t.Fatalf("search before the erasure: %d, %v", len(res), err)
	}
	if n, m := sqlite.CopyMatches(st, "Xylocarpine"), sqlite.CopyMatches(st, "Tamarillo"); n != 1 || m != 1 {
		t.Fatalf("the copy before the erasure holds the words in %d and %d records, want 1 and 1", n, m)
	}
	if _, err := svc.Forget(ctx, alice, gone.ID, "", true); err != nil {
		t.Fatal(err)
	}
	if n := sqlite.CopyMatches(st, "Xylocarpine"); n != 0 {
		t.Errorf("after the erasure the copy holds its word in %d records", n)
	}
	if n := sqlite.CopyMatches(st, "Tamarillo"); n != 1 {
		t.Errorf("after the erasure the copy holds the kept record's word in %d records, want 1", n)
	}
	if res, err := svc.Search(ctx, alice, custody.SearchInput{Query: "Tamarillo"}); err != nil || len(res) != 1 {
		t.Errorf("search of the kept record: %d, %v", len(res), err)
	}
}
