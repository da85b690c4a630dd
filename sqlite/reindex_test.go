package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/sqlite"
)

// reindexStore is a store, tidied (every record in the FTS5 indexes), with
// a key in two versions, a root and its summary, and a payment note.
type reindexStore struct {
	st                  *sqlite.Store
	svc                 *custody.Service
	alice               *custody.Caller
	colour, root, child string
	note                string
}

func newReindexStore(t *testing.T, open func(context.Context, string) (*sqlite.Store, error)) *reindexStore {
	t.Helper()
	st, _, svc, alice := serviceOn(t, t.TempDir(), open)
	s := &reindexStore{st: st, svc: svc, alice: alice}
	s.colour = colours(t, svc, alice, "blue", "green")
	s.root = derive(t, svc, alice, "root episode")
	s.child = derive(t, svc, alice, "summary of the root", s.root)
	s.note = derive(t, svc, alice, "pay the plumber to ACCT-7777")
	if err := st.Tidy(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Verify(t.Context(), custody.VerifyOptions{}); err != nil {
		t.Fatalf("untouched store: %v", err)
	}
	return s
}

func (s *reindexStore) exec(t *testing.T, q string) {
	t.Helper()
	if _, err := s.st.DB().ExecContext(t.Context(), q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// mentioning is the ids of the records the gate finds mentioning v.
func (s *reindexStore) mentioning(t *testing.T, v string) []string {
	t.Helper()
	var ids []string
	err := s.st.View(t.Context(), func(tx custody.Tx) error {
		recs, err := tx.Mentioning(context.Background(), custody.Scope{Tenant: "acme", Subject: "alice"}, custody.MentionQuery{Text: v})
		for _, r := range recs {
			ids = append(ids, r.ID)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// Reindex rebuilds what verify reports as a derived difference, and
// damage verify cannot see (a trigram row replaced by other text of the
// same length): afterwards verify passes, and the cascade, the version in
// force, search and the gate work again.
func TestReindexMendsDerivedStructures(t *testing.T) {
	ctx := t.Context()
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, s *reindexStore)
		seen   bool // verify reports it
		works  func(t *testing.T, s *reindexStore) bool
		// fts: the store ranks searches with FTS5 alone; its copy of the
		// index in memory is built from the records, and FTS5's damage
		// does not reach it.
		fts bool
	}{
		{"edge deleted", func(t *testing.T, s *reindexStore) { s.exec(t, `DELETE FROM edges`) }, true,
			func(t *testing.T, s *reindexStore) bool { // what a quarantine of the root would suspend
				var got []custody.IDState
				err := s.st.View(ctx, func(tx custody.Tx) (err error) { got, err = tx.Descendants(ctx, "acme", s.root); return err })
				return err == nil && len(got) == 1 && got[0].ID == s.child
			}, false},
		{"head flags flipped", func(t *testing.T, s *reindexStore) { s.exec(t, `UPDATE records SET head = 1 - head WHERE key != ''`) }, true,
			func(t *testing.T, s *reindexStore) bool {
				p, err := s.svc.List(ctx, s.alice, custody.ListInput{Namespace: "prefs", Key: "colour"})
				return err == nil && len(p.Items) == 1 && p.Items[0].ID == s.colour
			}, false},
		{"search rows deleted", func(t *testing.T, s *reindexStore) {
			s.exec(t, `INSERT INTO records_fts (records_fts) VALUES ('delete-all')`)
		}, true,
			func(t *testing.T, s *reindexStore) bool {
				hits, err := s.svc.Search(ctx, s.alice, custody.SearchInput{Query: "plumber"})
				return err == nil && len(hits) == 1 && hits[0].Record.ID == s.note
			}, true},
		{"trigram row replaced by text of the same length", func(t *testing.T, s *reindexStore) {
			var rid int64
			var r custody.Record
			if err := s.st.DB().QueryRowContext(ctx, `SELECT rid, body, key, namespace, source_ref FROM records WHERE id = ?`, s.note).Scan(&rid, &r.Body, &r.Key, &r.Namespace, &r.SourceRef); err != nil {
				t.Fatal(err)
			}
			forged := strings.ReplaceAll(custody.RecordGateIndex(&r), "7777", "1042")
			s.exec(t, fmt.Sprintf(`DELETE FROM records_tri WHERE rowid = %d`, rid))
			if _, err := s.st.DB().ExecContext(ctx, `INSERT INTO records_tri (rowid, norm) VALUES (?, ?)`, rid, forged); err != nil {
				t.Fatal(err)
			}
		}, false, func(t *testing.T, s *reindexStore) bool {
			return slices.Equal(s.mentioning(t, "acct7777"), []string{s.note})
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			open := sqlite.OpenUntidied
			if tc.fts {
				open = sqlite.OpenUntidiedFTS
			}
			s := newReindexStore(t, open)
			if !tc.works(t, s) {
				t.Fatal("the check fails on an untouched store")
			}
			tc.damage(t, s)
			_, err := s.svc.Verify(ctx, custody.VerifyOptions{})
			var d *custody.Difference
			switch {
			case tc.seen && (!errors.As(err, &d) || !d.Derived):
				t.Fatalf("verify after the damage = %v; want a difference in a derived structure", err)
			case !tc.seen && err != nil:
				t.Fatalf("verify after the damage = %v; this damage was expected to go unseen", err)
			}
			if tc.works(t, s) {
				t.Fatal("the damage changed nothing the check sees")
			}
			if _, err := s.svc.Reindex(ctx, custody.ReindexOptions{}); err != nil {
				t.Fatalf("reindex: %v", err)
			}
			if !tc.works(t, s) {
				t.Error("the store still misbehaves after the reindex")
			}
			if _, err := s.svc.Verify(ctx, custody.VerifyOptions{}); err != nil {
				t.Errorf("verify after the reindex: %v", err)
			}
		})
	}
}

// A store whose records themselves differ from the log is not reindexed:
// rebuilding from the records would make the damage consistent. Nothing
// is rebuilt; restoring a snapshot is the remedy.
func TestReindexRefusesWhenRecordsDiffer(t *testing.T) {
	ctx := t.Context()
	s := newReindexStore(t, sqlite.OpenUntidied)
	s.exec(t, `DELETE FROM edges`)
	s.exec(t, `UPDATE records SET body = 'pay the plumber to ACCT-1042' WHERE body LIKE 'pay%'`)
	_, err := s.svc.Reindex(ctx, custody.ReindexOptions{})
	if !errors.Is(err, custody.ErrRecordsDiffer) {
		t.Fatalf("reindex over a rewritten record = %v; want ErrRecordsDiffer", err)
	}
	var n int
	if err := s.st.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM edges`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d edges after the refused reindex (%v); want none rebuilt", n, err)
	}
}
