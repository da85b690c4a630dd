package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/custody-mem/custody/client"
	"github.com/custody-mem/custody/httpapi"
	"github.com/custody-mem/custody/internal/bulk"
)

// factLines are n facts "fact 0" … "fact n−1" in namespace imp, the one
// at bad (if ≥ 0) with a namespace no server takes.
func factLines(n, bad int) []string {
	lines := make([]string, n)
	for i := range lines {
		ns := "imp"
		if i == bad {
			ns = "no spaces"
		}
		lines[i] = fmt.Sprintf(`{"namespace":%q,"class":"fact","body":"fact %d","channel":"user"}`, ns, i)
	}
	return lines
}

// bodies counts the bodies of namespace imp, every page of it.
func bodies(t *testing.T, c *client.Client) map[string]int {
	t.Helper()
	out := map[string]int{}
	for cursor := ""; ; {
		page, err := c.List(t.Context(), client.ListOptions{Namespace: "imp", Limit: 500, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page.Items {
			out[r.Body]++
		}
		if cursor = page.NextCursor; cursor == "" {
			return out
		}
	}
}

// holdsOnce reports the first of facts from … to−1 that imp does not hold
// exactly once, and any body beyond them.
func holdsOnce(t *testing.T, got map[string]int, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		if n := got[fmt.Sprintf("fact %d", i)]; n != 1 {
			t.Errorf("fact %d is in the store %d times, want once", i, n)
			return
		}
	}
	if len(got) != to-from {
		t.Errorf("the store holds %d facts, want %d (facts %d to %d)", len(got), to-from, from, to-1)
	}
}

// importExit runs custody import as the holder of token, as main does, and
// returns its exit status and what it printed.
func importExit(t *testing.T, token string, args ...string) (int, string, string) {
	t.Helper()
	t.Setenv("CUSTODY_TOKEN", token)
	var out, errOut bytes.Buffer
	code := execute(context.Background(), append([]string{"import"}, args...), &out, &errOut)
	return code, out.String(), errOut.String()
}

// Two batches in flight, the second with a bad line: the first is
// written, the second refused whole, the import exits 1 naming the line and
// the --skip that goes on; going on imports the rest, each candidate once.
func TestImportTwoInFlightSecondBatchRefused(t *testing.T) {
	principal := cliServer(t)
	alice := principal("alice", []string{"user"})
	c := client.New(os.Getenv("CUSTODY_URL"), alice)
	lines := factLines(2000, 1499)
	code, out, errOut := importExit(t, alice, "--in", writeFile(t, lines...))
	if code != 1 || out != "" {
		t.Errorf("import exited %d printing %q; want 1 and nothing on stdout", code, out)
	}
	want := "custody import: line 1500 was refused, with its whole batch: namespace"
	if !strings.HasPrefix(errOut, want) || !strings.Contains(errOut, "\nthe 1000 candidates before its batch are in the store (this run: 1000 admitted); mend the line and run again with --skip 1000\n") {
		t.Errorf("import said %q; want %q…, the first batch in the store and --skip 1000", errOut, want)
	}
	holdsOnce(t, bodies(t, c), 0, 1000)

	lines[1499] = strings.Replace(lines[1499], "no spaces", "imp", 1)
	code, out, errOut = importExit(t, alice, "--in", writeFile(t, lines...), "--skip", "1000")
	if code != 0 || out != "imported 1000 candidates: 1000 admitted\n" {
		t.Errorf("import --skip 1000 exited %d printing %q, %q", code, out, errOut)
	}
	holdsOnce(t, bodies(t, c), 0, 2000)
}

// Two batches in flight, the first with a bad line: the second was sent
// with it and is written; the error says so, and the --skip and --count it
// names import exactly what is missing. One batch at a time, nothing is
// written.
func TestImportTwoInFlightFirstBatchRefused(t *testing.T) {
	principal := cliServer(t)
	alice := principal("alice", []string{"user"})
	c := client.New(os.Getenv("CUSTODY_URL"), alice)
	lines := factLines(2000, 4)
	in := writeFile(t, lines...)

	code, _, errOut := importExit(t, alice, "--in", in, "--parallel", "1")
	if code != 1 || !strings.Contains(errOut, "line 5 was refused") || !strings.Contains(errOut, "\nnothing was imported\n") {
		t.Errorf("import --parallel 1 exited %d saying %q; want 1, line 5 and nothing imported", code, errOut)
	}
	if got := bodies(t, c); len(got) != 0 {
		t.Errorf("one batch at a time, a refused first batch left %d facts", len(got))
	}

	code, _, errOut = importExit(t, alice, "--in", in)
	want := "\nthe candidates of lines 1001 to 2000 were sent before the refusal was known and are in the store (this run: 1000 admitted); mend the line and import what is missing with --skip 0 --count 1000\n"
	if code != 1 || !strings.Contains(errOut, "line 5 was refused, with its whole batch") || !strings.Contains(errOut, want) {
		t.Errorf("import exited %d saying %q; want 1, line 5 and %q", code, errOut, want)
	}
	holdsOnce(t, bodies(t, c), 1000, 2000)

	lines[4] = strings.Replace(lines[4], "no spaces", "imp", 1)
	code, out, errOut := importExit(t, alice, "--in", writeFile(t, lines...), "--skip", "0", "--count", "1000")
	if code != 0 || out != "imported 1000 candidates: 1000 admitted\n" {
		t.Errorf("import --skip 0 --count 1000 exited %d printing %q, %q", code, out, errOut)
	}
	holdsOnce(t, bodies(t, c), 0, 2000)
}

// A key's versions in two batches are decided in the order of the file:
// the batch with the second version waits for the one with the first.
func TestImportKeepsAKeysOrder(t *testing.T) {
	principal := cliServer(t)
	alice := principal("alice", []string{"user"})
	lines := factLines(2000, -1)
	lines[999] = `{"namespace":"imp","key":"tea","class":"fact","body":"green tea","channel":"user"}`
	lines[1000] = `{"namespace":"imp","key":"tea","class":"fact","body":"black tea","channel":"user"}`
	if out := mustRun(t, alice, runImport, "--in", writeFile(t, lines...)); out != "imported 2000 candidates: 2000 admitted\n" {
		t.Errorf("import printed %q", out)
	}
	page, err := client.New(os.Getenv("CUSTODY_URL"), alice).List(t.Context(), client.ListOptions{Namespace: "imp", Key: "tea"})
	if err != nil || len(page.Items) != 1 || page.Items[0].Body != "black tea" || page.Items[0].Version != 2 {
		t.Fatalf("the key tea holds %+v, %v; want black tea, version 2", page, err)
	}
}

// keyOrder makes a batch follow the last batch before it that shares a key.
func TestKeyOrder(t *testing.T) {
	item := func(key string) importItem {
		return importItem{req: httpapi.MemoryRequest{Namespace: "imp", Key: key}}
	}
	batches := []importBatch{
		{items: []importItem{item("a"), item("")}},
		{items: []importItem{item("b")}},
		{items: []importItem{item(""), item("c")}},
		{items: []importItem{item("a"), item("b"), item("b")}},
		{items: []importItem{item("c")}},
	}
	after := keyOrder(batches)
	for i, want := range []int{-1, -1, -1, 1, 2} {
		if got := after(i); got != want {
			t.Errorf("batch %d follows %d, want %d", i, got, want)
		}
	}
}

// What is missing after a stop is the refused batch and every batch not
// written after it, as the runs of --skip (and --count) that import them.
func TestImportStopMissing(t *testing.T) {
	batches := make([]importBatch, 5)
	for i := range batches {
		batches[i] = importBatch{start: i * 10, items: make([]importItem, 10)}
	}
	W, R, N := bulk.Written, bulk.Refused, bulk.NotSent
	for _, tc := range []struct {
		outcomes    []bulk.Outcome
		refused     int
		skip, total int
		want        string
	}{
		{[]bulk.Outcome{W, R, N, N, N}, 1, 0, 50, "--skip 10"},
		{[]bulk.Outcome{W, R, W, N, N}, 1, 0, 50, "--skip 10 --count 10, then --skip 30"},
		{[]bulk.Outcome{W, R, W, R, W}, 1, 5, 55, "--skip 15 --count 10, then --skip 35 --count 10"},
		{[]bulk.Outcome{R, W, N, N, N}, 0, 0, 80, "--skip 0 --count 10, then --skip 20 --count 30"}, // an import with --count 50
	} {
		at := stop{batches: batches, outcomes: tc.outcomes, refused: tc.refused, skip: tc.skip, total: tc.total}
		if got := strings.Join(at.missing(), ", then "); got != tc.want {
			t.Errorf("%v from %d: missing %q, want %q", tc.outcomes, tc.refused, got, tc.want)
		}
	}
}
