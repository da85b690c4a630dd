package sqlite_test

import (
	"errors"
	"fmt"
	"github.com/custody-mem/custody/internal/lexical"
	"path/filepath"
	"slices"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/storetest"
)

// In a batch of writes sharing a commit, the search index ends as if the
// writes had committed one by one: a write that fails leaves no search row,
// a record erased in the batch is not found, whether it was written in the
// batch or before it, and an erasure that rolls back leaves the record
// found. The first search after the batch finds its records, pending
// still: the copy of the index holds them since the commit.
func TestBatchSearchRows(t *testing.T) {
	ctx := t.Context()
	st, err := sqlite.OpenUntidied(ctx, filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	n := 0
	rec := func(word string) *custody.Record {
		n++
		return &custody.Record{ID: fmt.Sprintf("01JBATCH%018d", n), Tenant: "acme", Owner: "alice", Namespace: "n",
			Class: custody.ClassFact, Body: word + " note", Channel: "user", Writer: "acme/alice", Authority: custody.AuthorityUser,
			Audience: custody.AudienceOwner, State: custody.StateAdmitted, CreatedAt: storetest.Start, Version: 1, Parents: []custody.Edge{}}
	}
	insert := func(r *custody.Record) func(custody.Tx) error {
		return func(tx custody.Tx) error { return tx.InsertRecord(ctx, r) }
	}
	erase := func(r *custody.Record, fail bool) func(custody.Tx) error {
		return func(tx custody.Tx) error {
			e := *r
			e.Body, e.Erased, e.State = "", true, custody.StateRetired
			if err := tx.UpdateRecord(ctx, &e); err != nil {
				return err
			}
			if fail {
				return errors.New("the erasing write fails after erasing")
			}
			return nil
		}
	}
	boom := errors.New("the write fails after indexing")
	before, beforeKept := rec("alpha"), rec("bravo")
	if errs := sqlite.CommitBatch(ctx, st, insert(before), insert(beforeKept)); errs[0] != nil || errs[1] != nil {
		t.Fatal(errs)
	}
	if err := st.Tidy(ctx); err != nil { // before and beforeKept are indexed, not pending
		t.Fatal(err)
	}
	kept, failed, inAndOut := rec("charlie"), rec("delta"), rec("echo")
	errs := sqlite.CommitBatch(ctx, st,
		insert(kept),
		func(tx custody.Tx) error {
			if err := tx.InsertRecord(ctx, failed); err != nil {
				return err
			}
			return boom
		},
		insert(inAndOut),
		erase(inAndOut, false),
		erase(before, false),
		erase(beforeKept, true),
	)
	if !errors.Is(errs[1], boom) || errs[5] == nil {
		t.Fatalf("batch errors = %v; want the second and the last to fail", errs)
	}
	for i, err := range errs {
		if i != 1 && i != 5 && err != nil {
			t.Fatalf("write %d of the batch: %v", i, err)
		}
	}
	if n := pendingRows(t, st); n != 1 {
		t.Errorf("%d records pending after the batch; want the one written and kept", n)
	}
	hits, err := st.Search(ctx, custody.Scope{Tenant: "acme", Subject: "alice", Now: storetest.Start}, custody.SearchQuery{Text: "note", Limit: 10})
	if err != nil || len(hits) != 2 {
		t.Errorf("search after the batch = %d hits, %v; want the two kept records", len(hits), err)
	}
	// The copy of the index ranked them where they wait; FTS5 gets them
	// when the writer is idle (Tidy here).
	if n := pendingRows(t, st); n != 1 {
		t.Errorf("%d records pending after a search ranked by the copy; want the one still waiting", n)
	}
	if err := st.Tidy(ctx); err != nil {
		t.Fatal(err)
	}
	if n := pendingRows(t, st); n != 0 {
		t.Errorf("%d records pending after the idle move; want none", n)
	}
	// The index itself, not retrieval, which would hide rows of retired or
	// missing records. The index holds terms (internal/lexical): stems.
	indexed := func(word string) []int64 {
		rows, err := st.DB().QueryContext(ctx, `SELECT rowid FROM records_fts WHERE records_fts MATCH ? ORDER BY rowid`, lexical.Query(word, 1)[0])
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []int64
		for rows.Next() {
			var rid int64
			if err := rows.Scan(&rid); err != nil {
				t.Fatal(err)
			}
			out = append(out, rid)
		}
		return out
	}
	rid := func(r *custody.Record) int64 {
		var id int64
		if err := st.DB().QueryRowContext(ctx, `SELECT rid FROM records WHERE id = ?`, r.ID).Scan(&id); err != nil {
			t.Fatalf("%s: %v", r.Body, err)
		}
		return id
	}
	for _, c := range []struct {
		word string
		want []int64
	}{
		{"charlie", []int64{rid(kept)}},
		{"delta", nil},
		{"echo", nil},
		{"alpha", nil},
		{"bravo", []int64{rid(beforeKept)}},
		{"note", []int64{rid(beforeKept), rid(kept)}},
	} {
		if got := indexed(c.word); !slices.Equal(got, c.want) {
			t.Errorf("search rows for %q after the batch = %v, want %v", c.word, got, c.want)
		}
	}
}
