package sqlite_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/sqlite"
)

// pendingRows counts the records waiting for the search indexes.
func pendingRows(t *testing.T, st *sqlite.Store) int {
	t.Helper()
	var n int
	if err := st.DB().QueryRowContext(t.Context(), `SELECT COUNT(*) FROM index_pending`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// The gate finds a value in a record that is still pending exactly as in
// one that is indexed, and an erased record in neither; a batch that fills
// index_pending moves it into the indexes.
func TestPendingRecords(t *testing.T) {
	ctx := t.Context()
	st, _, svc, alice := serviceOn(t, t.TempDir(), sqlite.OpenUntidied)
	rev := reviewer(t, svc)
	remember := func(body string) string {
		r, err := svc.Remember(ctx, alice, custody.Candidate{Namespace: "n", Class: custody.ClassFact, Body: body, Channel: "user"})
		if err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	mentioning := func(v string) []string {
		var ids []string
		err := st.View(ctx, func(tx custody.Tx) error {
			recs, err := tx.Mentioning(ctx, custody.Scope{Tenant: "acme", Subject: "alice"}, custody.MentionQuery{Text: v})
			for _, r := range recs {
				ids = append(ids, r.ID)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(ids)
		return ids
	}
	old := remember("Pay rent to DE89 3704-0044 monthly")
	oldErased := remember("old card 4111-2222-3333")
	if err := st.Tidy(ctx); err != nil {
		t.Fatal(err)
	}
	if n := pendingRows(t, st); n != 0 {
		t.Fatalf("%d rows pending after tidying, want 0", n)
	}
	fresh := remember("the new IBAN is de89370400449 for rent")
	freshErased := remember("new card 4111 2222 3333")
	if n := pendingRows(t, st); n != 2 {
		t.Fatalf("%d rows pending after two writes, want 2", n)
	}
	both := []string{old, fresh}
	slices.Sort(both)
	for _, v := range []string{"de8937040044", "DE8937040044", "37040044"} {
		if got := mentioning(v); !slices.Equal(got, both) {
			t.Errorf("mentioning %q with one record pending = %v, want %v", v, got, both)
		}
	}
	if got := mentioning("newiban"); !slices.Equal(got, []string{fresh}) {
		t.Errorf("mentioning a pending record's words = %v, want [%s]", got, fresh)
	}
	for _, id := range []string{oldErased, freshErased} {
		if _, err := svc.Retire(ctx, rev, id, "", true); err != nil {
			t.Fatal(err)
		}
	}
	if n := pendingRows(t, st); n != 1 {
		t.Errorf("%d rows pending after erasing one, want 1", n)
	}
	if got := mentioning("411122223333"); len(got) != 0 {
		t.Errorf("mentioning erased records = %v, want none", got)
	}
	if err := st.Tidy(ctx); err != nil {
		t.Fatal(err)
	}
	if got := mentioning("de8937040044"); !slices.Equal(got, both) {
		t.Errorf("mentioning after the move = %v, want %v", got, both)
	}
	if got := mentioning("411122223333"); len(got) != 0 {
		t.Errorf("mentioning erased records after the move = %v, want none", got)
	}

	// One batch that fills index_pending commits with it moved.
	err := st.Update(ctx, func(tx custody.Tx) error {
		for i := range 300 {
			r := &custody.Record{ID: fmt.Sprintf("01JBATCH%018d", i), Tenant: "acme", Owner: "alice", Namespace: "n",
				Class: custody.ClassFact, Body: fmt.Sprintf("batch value ZZ%04d", i), Channel: "user", Writer: "acme/alice",
				Authority: custody.AuthorityUser, Audience: custody.AudienceOwner, State: custody.StateAdmitted, Version: 1}
			if err := tx.InsertRecord(ctx, r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := pendingRows(t, st); n != 0 {
		t.Errorf("%d rows pending after a batch of 300, want 0", n)
	}
	if got := mentioning("zz0299"); len(got) != 1 {
		t.Errorf("mentioning a moved batch record = %v, want one", got)
	}
}

// Verify checks the pending rows as it checks the indexed ones: a pending
// row deleted, rewritten, left without its record or beside the record's
// own index rows is found, and the untouched store passes.
func TestVerifyChecksPendingRecords(t *testing.T) {
	ctx := t.Context()
	for _, tc := range []struct{ name, sql, want string }{
		{"deleted", `DELETE FROM index_pending`, "no row in the search index"},
		{"rewritten", `UPDATE index_pending SET norm = 'acct1042 '`, "not its own"},
		{"orphaned", `UPDATE index_pending SET rid = rid + 100`, "a row waits for the indexes, but no live record is there"},
		{"also searched", `INSERT INTO records_fts (rowid, body, key) SELECT p.rid, r.body, r.key FROM index_pending p JOIN records r ON r.rid = p.rid`,
			"already has a row in the search index"},
		{"also trigrams", `INSERT INTO records_tri (rowid, norm) SELECT rid, norm FROM index_pending`,
			"already has a row in the gate's trigram index"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, _, svc, alice := serviceOn(t, t.TempDir(), sqlite.OpenUntidied)
			if _, err := svc.Remember(ctx, alice, custody.Candidate{Namespace: "n", Class: custody.ClassFact, Body: "pay ACCT-7777", Channel: "user"}); err != nil {
				t.Fatal(err)
			}
			if n := pendingRows(t, st); n != 1 {
				t.Fatalf("%d rows pending; want 1", n)
			}
			if _, err := svc.Verify(ctx, custody.VerifyOptions{}); err != nil {
				t.Fatalf("untouched store: %v", err)
			}
			if _, err := st.DB().ExecContext(ctx, tc.sql); err != nil {
				t.Fatal(err)
			}
			_, err := svc.Verify(ctx, custody.VerifyOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("verify = %v; want a difference saying %q", err, tc.want)
			}
		})
	}
}

// A search finds every record whose write returned before it began,
// pending or not, while other writers keep adding pending rows: each
// writer searches for the word it has just written. With the copy of the
// index in memory, the records stay pending (the copy took them at their
// commit, and no search moves them); with FTS5 alone, each search moves
// them first.
func TestSearchFindsWhatWasWritten(t *testing.T) {
	for _, c := range []struct {
		name string
		open func(context.Context, string) (*sqlite.Store, error)
	}{{"copy", sqlite.OpenUntidied}, {"fts5", sqlite.OpenUntidiedFTS}} {
		t.Run(c.name, func(t *testing.T) {
			ctx := t.Context()
			st, _, svc, alice := serviceOn(t, t.TempDir(), c.open)
			var wg sync.WaitGroup
			for g := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 40 {
						word := fmt.Sprintf("w%dx%d", g, i)
						d, err := svc.Remember(ctx, alice, custody.Candidate{Namespace: "n", Class: custody.ClassEpisode, Body: "note " + word, Channel: "user"})
						if err != nil {
							t.Error(err)
							return
						}
						hits, err := svc.Search(ctx, alice, custody.SearchInput{Query: word})
						if err != nil || len(hits) != 1 || hits[0].Record.ID != d.ID {
							t.Errorf("search for %s just written = %d hits, %v", word, len(hits), err)
							return
						}
					}
				}()
			}
			wg.Wait()
			hits, err := svc.Search(ctx, alice, custody.SearchInput{Query: "note", Limit: custody.MaxSearchLimit})
			if err != nil || len(hits) != custody.MaxSearchLimit {
				t.Errorf("search for the 160 notes = %d hits, %v; want the most a search returns, %d", len(hits), err, custody.MaxSearchLimit)
			}
			if _, _, byCopy, byFTS := st.SearchIndexStats(); c.name == "copy" && byCopy == 0 || c.name == "fts5" && byFTS == 0 {
				t.Errorf("%d searches by the copy, %d by FTS5; want them by %s", byCopy, byFTS, c.name)
			}
		})
	}
}

// A search ranked by the copy of the index leaves the records written
// before it pending: the copy took them at their writes' commits, and
// FTS5 gets them when the writer is idle. A search FTS5 ranks (the copy
// off) moves them first. One writer, one search after each write: every
// write's commit has reached the copy when its Remember returns.
func TestSearchLeavesRecordsPending(t *testing.T) {
	for _, c := range []struct {
		name    string
		open    func(context.Context, string) (*sqlite.Store, error)
		pending int
	}{{"copy", sqlite.OpenUntidied, 5}, {"fts5", sqlite.OpenUntidiedFTS, 0}} {
		t.Run(c.name, func(t *testing.T) {
			ctx := t.Context()
			st, _, svc, alice := serviceOn(t, t.TempDir(), c.open)
			for i := range 5 {
				word := fmt.Sprintf("word%d", i)
				if _, err := svc.Remember(ctx, alice, custody.Candidate{Namespace: "n", Class: custody.ClassFact, Body: "note " + word, Channel: "user"}); err != nil {
					t.Fatal(err)
				}
				if hits, err := svc.Search(ctx, alice, custody.SearchInput{Query: word}); err != nil || len(hits) != 1 {
					t.Fatalf("search for %s just written = %d hits, %v", word, len(hits), err)
				}
			}
			if n := pendingRows(t, st); n != c.pending {
				t.Errorf("%d records pending after the searches; want %d", n, c.pending)
			}
			_, _, byCopy, byFTS := st.SearchIndexStats()
			if c.name == "copy" && (byFTS != 0 || byCopy != 5) || c.name == "fts5" && byFTS != 5 {
				t.Errorf("%d searches by the copy, %d by FTS5; want all 5 by %s", byCopy, byFTS, c.name)
			}
		})
	}
}
