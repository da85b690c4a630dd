package sqlite_test

import (
	"context"
	"io"
	"regexp"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/sqlite"
)

// The planner has no statistics, so a query written the natural way can walk
// a whole tenant where an id lookup was meant (a cascade did, once per batch
// of 1,000 ids; a list by key did, to reach an old key). This runs the
// statements behind get, list, lineage, a cascade and the gate's value
// lookup, then checks the plan
// of every one that names ids or an index: each must seek, never walk the
// tenant or the table.
func TestIDStatementsSeekByID(t *testing.T) {
	ctx := t.Context()
	st, _, svc, alice := serviceAt(t, t.TempDir())
	rev := reviewer(t, svc)
	root, err := svc.Remember(ctx, alice, custody.Candidate{Namespace: "n", Class: custody.ClassEpisode, Body: "root", Channel: "user"})
	if err != nil {
		t.Fatal(err)
	}
	kid, err := svc.Remember(ctx, alice, custody.Candidate{Namespace: "n", Class: custody.ClassEpisode, Body: "kid", Channel: "user",
		DerivedFrom: []custody.Edge{{ID: root.ID, Weight: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Get(ctx, alice, kid.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Lineage(ctx, alice, kid.ID); err != nil {
		t.Fatal(err)
	}
	for _, in := range []custody.ListInput{{}, {Namespace: "n"}, {Namespace: "n", Key: "k"}} {
		if _, err := svc.List(ctx, alice, in); err != nil {
			t.Fatal(err)
		}
	}
	if ids, err := svc.Quarantine(ctx, rev, root.ID, ""); err != nil || len(ids) != 2 {
		t.Fatalf("quarantine: %v, %v", ids, err)
	}
	if items, _, err := svc.ReviewQueue(ctx, rev, "", 10); err != nil || len(items) != 1 {
		t.Fatalf("review queue: %v, %v", items, err)
	}
	if _, err := svc.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Export(ctx, "acme", io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := st.View(ctx, func(tx custody.Tx) error {
		if _, err := tx.Mentioning(ctx, custody.Scope{Tenant: "acme", Subject: "alice", Groups: []string{"fin"}}, custody.MentionQuery{Text: "ki"}); err != nil {
			return err // a text too short for a trigram
		}
		_, err := tx.Mentioning(ctx, custody.Scope{Tenant: "acme", Subject: "alice"}, custody.MentionQuery{Text: "kid"})
		return err
	}); err != nil {
		t.Fatal(err)
	}

	// The writer prepares a batch's new statements after answering it; one
	// more write waits for that.
	if err := st.Update(ctx, func(custody.Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	checked, waiting, scans := 0, 0, 0
	for _, q := range sqlite.CachedQueries(st) {
		if strings.Contains(q, "ORDER BY r.rid") {
			scans++
			if p := strings.Join(plan(t, st, q), "; "); strings.Contains(p, "TEMP B-TREE") {
				t.Errorf("a scan in row order sorts first (it should stream): %s\n%s", p, q)
			}
		}
		if strings.Contains(q, "r.state IN (") {
			waiting++
			if p := strings.Join(plan(t, st, q), "; "); !strings.Contains(p, "records_waiting") {
				t.Errorf("a read of records in waiting states does not use records_waiting: %s\n%s", p, q)
			}
		}
		for _, line := range plan(t, st, q) {
			if strings.HasPrefix(line, "SCAN edges") {
				t.Errorf("plan step %q reads every edge, in:\n%s", line, q)
			}
		}
		if !namesIDs(q) {
			continue
		}
		checked++
		for _, line := range plan(t, st, q) {
			if walksRecords(line) {
				t.Errorf("plan step %q walks the records instead of seeking by id, in:\n%s", line, q)
			}
		}
	}
	if waiting == 0 || scans == 0 {
		t.Errorf("the workload read records by state %d times and scanned them %d times; want both", waiting, scans)
	}
	if checked < 8 {
		t.Fatalf("only %d statements naming ids were run; the workload should run more", checked)
	}
}

// namesIDs reports whether q selects or changes records by id, or names
// the index to walk.
func namesIDs(q string) bool {
	return strings.Contains(q, "id = ?") && strings.Contains(q, "records") || strings.Contains(q, "json_each") ||
		strings.Contains(q, "WITH RECURSIVE") || strings.Contains(q, "INDEXED BY") || strings.Contains(q, "records_tri MATCH")
}

// walksRecords reports whether a plan step reads records (or an index of
// them) by scanning, or by a seek on the tenant or state alone. The records
// waiting for review are meant to be walked.
func walksRecords(step string) bool {
	f := strings.Fields(step)
	if len(f) < 2 || (f[1] != "records" && f[1] != "r" && f[1] != "n") || strings.Contains(step, "records_waiting") {
		return false
	}
	if f[0] == "SCAN" {
		return true
	}
	return strings.HasSuffix(step, "(tenant=?)") || strings.HasSuffix(step, "(state=? AND tenant=?)")
}

func plan(t *testing.T, st *sqlite.Store, q string) []string {
	t.Helper()
	n := strings.Count(q, "?")
	args := make([]any, n)
	for i := range args {
		args[i] = "x"
	}
	rows, err := st.DB().QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatalf("explain %s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		out = append(out, detail)
	}
	return out
}

// The statements that read a key's versions (a keyed write, history, a
// list by key) seek through records_ns_key or records_head, which hold
// keyed records only: a statement that lost its test of a non-empty key
// would scan.
func TestKeyStatementsSeekByKey(t *testing.T) {
	ctx := t.Context()
	st, _, svc, alice := serviceAt(t, t.TempDir())
	last := colours(t, svc, alice, "blue", "green")
	if vs, err := svc.History(ctx, alice, last); err != nil || len(vs) != 2 {
		t.Fatalf("history = %d versions, %v", len(vs), err)
	}
	if p, err := svc.List(ctx, alice, custody.ListInput{Namespace: "prefs", Key: "colour"}); err != nil || len(p.Items) != 1 || p.Items[0].Body != "green" {
		t.Fatalf("list by key = %+v, %v", p, err)
	}
	if _, err := svc.Verify(ctx, custody.VerifyOptions{}); err != nil { // checks every head flag against its key's versions
		t.Fatal(err)
	}
	if err := st.Update(ctx, func(custody.Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, q := range sqlite.CachedQueries(st) {
		if !strings.Contains(q, "key = ?") && !strings.Contains(q, "key = r.key") {
			continue
		}
		checked++
		// Verify's head check walks every record (SCAN r) and seeks each
		// key's other versions (n); every other read seeks alone (a
		// statement of scalar subqueries, KeyVersions's, scans the one
		// constant row it selects them in).
		steps := plan(t, st, q)
		for _, step := range steps {
			byKey := strings.Contains(step, "records_ns_key") || strings.Contains(step, "records_head")
			if strings.HasPrefix(step, "SEARCH n") && !byKey || strings.HasPrefix(step, "SCAN") && step != "SCAN r" && step != "SCAN CONSTANT ROW" {
				t.Errorf("a read by key does not seek through a key index: %s\n%s", strings.Join(steps, "; "), q)
			}
		}
		if p := strings.Join(steps, "; "); !strings.Contains(p, "records_ns_key") && !strings.Contains(p, "records_head") {
			t.Errorf("a read by key uses no key index: %s\n%s", p, q)
		}
	}
	if checked < 4 {
		t.Errorf("only %d statements read by key; the workload should run more", checked)
	}
}

// The head triggers run in every keyed write and every change of a keyed
// record's state: each of their statements must seek the key's entries in
// records_ns_key (schema 29), never walk the owner's or the tenant's
// records. The statements are read from the database's own triggers, each
// NEW column a parameter.
func TestHeadTriggersSeekByKey(t *testing.T) {
	st, _, _, _ := serviceAt(t, t.TempDir())
	rows, err := st.DB().QueryContext(t.Context(), `SELECT name, sql FROM sqlite_schema WHERE type = 'trigger' AND name LIKE 'records_head_%'`)
	if err != nil {
		t.Fatal(err)
	}
	bodies := map[string]string{}
	for rows.Next() {
		var name, sql string
		if err := rows.Scan(&name, &sql); err != nil {
			t.Fatal(err)
		}
		bodies[name] = sql
	}
	rows.Close()
	if len(bodies) != 2 {
		t.Fatalf("head triggers %v; want records_head_insert and records_head_state", bodies)
	}
	newCol := regexp.MustCompile(`NEW\.\w+`)
	for name, sql := range bodies {
		body := sql[strings.Index(sql, " BEGIN")+len(" BEGIN") : strings.LastIndex(sql, "END")]
		for stmt := range strings.SplitSeq(body, ";") {
			if stmt = strings.TrimSpace(stmt); stmt == "" {
				continue
			}
			steps := plan(t, st, newCol.ReplaceAllString(stmt, "?"))
			p := strings.Join(steps, "; ")
			for _, step := range steps {
				if strings.HasPrefix(step, "SCAN") || strings.HasPrefix(step, "SEARCH") && !strings.Contains(step, "records_ns_key") && !strings.Contains(step, "PRIMARY KEY") {
					t.Errorf("%s: a statement does not seek by key: %s\n%s", name, p, stmt)
				}
			}
			if !strings.Contains(p, "records_ns_key") {
				t.Errorf("%s: a statement uses no key index: %s\n%s", name, p, stmt)
			}
		}
	}
}
