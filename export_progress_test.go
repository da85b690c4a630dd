package custody_test

import (
	"fmt"
	"io"
	"testing"

	custody "github.com/custody-mem/custody"
)

// An export tells its progress against the tenant's record count, every
// thousand records and at the end; the snapshot is the one Export writes.
func TestExportProgress(t *testing.T) {
	e := newEnv(t, custody.Options{})
	alice := e.act(e.principal("acme", "alice", []string{"user"}, nil, nil), "")
	const n = 2300
	for i := range n {
		e.remember(alice, custody.Candidate{Namespace: "n", Class: custody.ClassEpisode, Body: fmt.Sprintf("note %d", i), Channel: "user"})
	}
	var calls [][2]uint64
	snap, err := e.svc.ExportProgress(e.ctx, "acme", io.Discard, func(done, total uint64) { calls = append(calls, [2]uint64{done, total}) })
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]uint64{{1000, n}, {2000, n}, {n, n}}
	if fmt.Sprint(calls) != fmt.Sprint(want) || len(snap.Records) != n {
		t.Errorf("progress %v for %d records, want %v", calls, len(snap.Records), want)
	}
}
