package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/httpapi"
	"github.com/custody-mem/custody/logmonitor"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/tlog"
	formats "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"
)

// monitorWrites is how many records TestLogMonitor writes between its
// restarts. The default keeps the test quick; the acceptance run follows
// 10,000: go test ./cmd/custody -run TestLogMonitor -monitor-writes 10000
var monitorWrites = flag.Int("monitor-writes", 600, "records TestLogMonitor writes (go test -run TestLogMonitor -monitor-writes 10000)")

// restartable serves the SQLite store of a directory at one URL across
// restarts: stop closes the service and its store (the URL answers 503
// until start opens them again), as a server restarted behind a stable
// address.
type restartable struct {
	t       *testing.T
	dir     string
	url     string
	handler atomic.Pointer[http.Handler]
	svc     *custody.Service
	store   *sqlite.Store
}

func newRestartable(t *testing.T, dir string) *restartable {
	r := &restartable{t: t, dir: dir}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if h := r.handler.Load(); h != nil {
			(*h).ServeHTTP(w, req)
			return
		}
		http.Error(w, "restarting", http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL
	r.start()
	t.Cleanup(r.stop)
	return r
}

func (r *restartable) start() {
	t := r.t
	t.Helper()
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(r.dir, "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	key, _, err := tlog.LoadOrCreateServerKey(filepath.Join(r.dir, "c.db.key"))
	if err != nil {
		t.Fatal(err)
	}
	name, err := custody.ResolveLogName(ctx, store, "")
	if err != nil {
		t.Fatal(err)
	}
	svc, err := custody.New(store, key, custody.Options{LogOrigin: name.Name})
	if err != nil {
		t.Fatal(err)
	}
	h := httpapi.New(svc, httpapi.Options{Logger: slog.New(slog.DiscardHandler)}).Handler()
	r.svc, r.store = svc, store
	r.handler.Store(&h)
}

func (r *restartable) stop() {
	if r.store != nil {
		r.handler.Store(nil)
		r.store.Close()
		r.store, r.svc = nil, nil
	}
}

// writeBatches remembers n records as alice, in batches, signing a
// checkpoint after each, and returns the log's size.
func (r *restartable) writeBatches(t *testing.T, alice *custody.Principal, n int, prefix string) uint64 {
	t.Helper()
	c, err := r.svc.Act(t.Context(), alice, "")
	if err != nil {
		t.Fatal(err)
	}
	for done := 0; done < n; {
		k := min(custody.MaxBatch, n-done)
		cands := make([]custody.Candidate, k)
		for i := range cands {
			cands[i] = custody.Candidate{Namespace: "n", Class: custody.ClassEpisode, Body: fmt.Sprintf("%s %d", prefix, done+i), Channel: "user"}
		}
		if _, err := r.svc.RememberBatch(t.Context(), c, cands); err != nil {
			t.Fatal(err)
		}
		done += k
	}
	cp, err := r.svc.Checkpoint(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	var size uint64
	if _, err := fmt.Sscanf(strings.SplitN(string(cp), "\n", 3)[1], "%d", &size); err != nil {
		t.Fatalf("checkpoint %q: %v", cp, err)
	}
	return size
}

// follow takes one step of m and returns the entries it reported,
// checking that they run on from want without a gap.
func follow(t *testing.T, m *logmonitor.Monitor, want int64) ([]logmonitor.Event, error) {
	t.Helper()
	var got []logmonitor.Event
	err := m.Step(t.Context(), func(ev logmonitor.Event) {
		if ev.Entry != nil {
			if ev.Index != want+int64(len(got)) {
				t.Fatalf("entry %d reported after %d entries from %d", ev.Index, len(got), want)
			}
			got = append(got, ev)
		}
	})
	return got, err
}

// custody log monitor follows a tenant's log from outside, written from
// docs/log-format.md alone: across thousands of writes and a restart of
// the server, every entry is read once from the bundles, proved, its
// signature checked, and decoded exactly as custody decodes it; the CLI
// keeps its pin in a file. A history rewritten from an older copy of the
// store (longer than the pin, or cut back) is reported and the pin kept,
// while the honest log passes; without a token only the tree is checked;
// a witness key the checkpoint lacks is reported.
func TestLogMonitor(t *testing.T) {
	dir, backup := t.TempDir(), t.TempDir()
	pinFile := filepath.Join(t.TempDir(), "pin")
	s := newRestartable(t, dir)
	ctx := t.Context()
	alice, _, err := s.svc.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: "alice", Roles: []string{"user"}})
	if err != nil {
		t.Fatal(err)
	}
	audra, auditorToken, err := s.svc.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: "audra", Roles: []string{"auditor"}})
	if err != nil {
		t.Fatal(err)
	}
	vkey, err := s.svc.VerifierKey("acme")
	if err != nil {
		t.Fatal(err)
	}
	logURL := s.url + "/log/" + s.svc.LogIDs().ID("acme")
	opts := logmonitor.Options{URL: logURL, VerifierKey: vkey, Token: auditorToken}
	m, err := logmonitor.New(opts, nil)
	if err != nil {
		t.Fatal(err)
	}

	// The honest log: principals, then records, read entry by entry.
	var seen int64
	size := s.writeBatches(t, alice, *monitorWrites/2, "first")
	got, err := follow(t, m, seen)
	if err != nil || int64(len(got)) != int64(size) {
		t.Fatalf("first step: %d entries, %v; want %d", len(got), err, size)
	}
	checkDecoded(t, s.svc, audra, got)
	seen = int64(size)
	firstSize := size
	s.stop()
	copyFiles(t, dir, backup, "c.db", "c.db-wal", "c.db-shm", "c.db.key")

	// While the server is down the monitor cannot read, and says so; the
	// pin stays.
	if _, err := follow(t, m, seen); err == nil || errors.Is(err, logmonitor.ErrInconsistent) {
		t.Fatalf("step while the server is down = %v; want an error reading it, not an alert", err)
	}
	s.start()
	if got, err := follow(t, m, seen); err != nil || len(got) != 0 {
		t.Fatalf("step after the restart, before any write = %d entries, %v; want none and no error", len(got), err)
	}
	size = s.writeBatches(t, alice, *monitorWrites-*monitorWrites/2, "second")
	got, err = follow(t, m, seen)
	if err != nil || int64(len(got)) != int64(size)-seen {
		t.Fatalf("step after the restart: %d entries, %v; want %d", len(got), err, int64(size)-seen)
	}
	checkDecoded(t, s.svc, audra, got[len(got)-3:])
	if got[0].Entry.Transition != "admission" || !strings.HasPrefix(got[0].Entry.Summary(), "admission by acme/alice: record ") {
		t.Errorf("the first entry after the restart: %s", got[0].Entry.Summary())
	}
	seen = int64(size)

	// The CLI: a first look pins the log and prints every entry; a second
	// prints none; without a token, only the checkpoint.
	t.Setenv("CUSTODY_VERIFIER_KEY", "")
	args := []string{"monitor", "--once", "--url", logURL, "--verifier", vkey, "--pin", pinFile}
	out := mustRun(t, auditorToken, runLog, args...)
	if n := strings.Count(out, "\nentry "); n != int(size) || !strings.HasPrefix(out, fmt.Sprintf("checkpoint: %s, %d entries", s.svc.LogOrigin("acme"), size)) ||
		!strings.Contains(out, fmt.Sprintf("entry %d at ", size-1)) {
		t.Fatalf("monitor --once printed %d entry lines; want %d:\n%.600s", n, size, out)
	}
	pinned, err := os.ReadFile(pinFile)
	if err != nil || !slices.Equal(pinned, m.Pinned()) {
		t.Fatalf("the pin file holds %q (%v); want the checkpoint the monitor verified", pinned, err)
	}
	if out := mustRun(t, auditorToken, runLog, args...); out != "" {
		t.Fatalf("monitor --once of an unchanged log printed %q", out)
	}
	if out := mustRun(t, "", runLog, args...); out != "" {
		t.Fatalf("monitor --once without a token, unchanged log: %q", out)
	}
	_, witnessKey, err := note.GenerateKey(rand.Reader, "example.com/witness")
	if err != nil {
		t.Fatal(err)
	}
	if witnessKey, err = formats.VKeyToCosignatureV1(witnessKey); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "", runLog, append(args, "--witness", witnessKey)...); !errors.Is(err, logmonitor.ErrNotWitnessed) {
		t.Fatalf("monitor --witness of a checkpoint without that cosignature = %v; want ErrNotWitnessed", err)
	}

	// The store put back to the copy taken before the restart and written
	// on with other records, past the pin: the log is longer, but not an
	// extension of the one pinned.
	s.stop()
	copyFiles(t, backup, dir, "c.db", "c.db-wal", "c.db-shm", "c.db.key")
	s.start()
	rewritten := s.writeBatches(t, alice, int(seen-int64(firstSize))+10, "rewritten")
	if int64(rewritten) <= seen {
		t.Fatalf("the rewritten log has %d entries, not more than the %d pinned", rewritten, seen)
	}
	if _, err := follow(t, m, seen); !errors.Is(err, logmonitor.ErrInconsistent) || !strings.Contains(err.Error(), "history was rewritten") {
		t.Fatalf("step over a rewritten history = %v; want ErrInconsistent", err)
	}
	_, _, err = run(t, auditorToken, runLog, args...)
	if !errors.Is(err, logmonitor.ErrInconsistent) || !strings.Contains(err.Error(), "ALERT") || !strings.Contains(err.Error(), pinFile) {
		t.Fatalf("monitor --once over a rewritten history = %v; want the alert naming the pin file", err)
	}
	if now, _ := os.ReadFile(pinFile); !slices.Equal(now, pinned) {
		t.Fatal("the pin file changed on a rewritten history")
	}
	// Without a token the tree alone tells too.
	if _, _, err := run(t, "", runLog, args...); !errors.Is(err, logmonitor.ErrInconsistent) {
		t.Fatalf("monitor --once without a token over a rewritten history = %v; want ErrInconsistent", err)
	}

	// Cut back to the copy: fewer entries than pinned.
	s.stop()
	copyFiles(t, backup, dir, "c.db", "c.db-wal", "c.db-shm", "c.db.key")
	s.start()
	if _, err := follow(t, m, seen); !errors.Is(err, logmonitor.ErrInconsistent) || !strings.Contains(err.Error(), "rolled back") {
		t.Fatalf("step over a rolled-back log = %v; want ErrInconsistent", err)
	}
}

// checkDecoded checks that the monitor decoded each entry as custody's own
// decoder does, from the entries route.
func checkDecoded(t *testing.T, svc *custody.Service, auditor *custody.Principal, evs []logmonitor.Event) {
	t.Helper()
	c, err := svc.Act(t.Context(), auditor, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		views, err := svc.LogEntries(t.Context(), c, uint64(ev.Index), uint64(ev.Index)+1)
		if err != nil || len(views) != 1 || views[0].Entry == nil {
			t.Fatalf("entry %d from custody: %v %v", ev.Index, views, err)
		}
		want, got := views[0].Entry, ev.Entry
		if got.Tenant != want.Tenant || got.RecordID != want.RecordID || !slices.Equal(got.RecordIDs, want.RecordIDs) ||
			got.Transition != want.Transition || got.PrevState != want.PrevState || got.NewState != want.NewState ||
			!slices.Equal(got.BodyHash, want.BodyHash) || got.PolicyVersion != want.PolicyVersion || got.Actor != want.Actor ||
			!got.Time.Equal(want.Time) || got.KeyID != want.KeyID || !slices.Equal(got.Signature, want.Signature) ||
			fmt.Sprint(got.Details) != fmt.Sprint(want.Details) {
			t.Fatalf("entry %d: the monitor decoded\n%+v\ncustody decodes\n%+v", ev.Index, got, want)
		}
	}
}

// custody log monitor without --once follows the log: it prints each new
// entry as the log grows, says on stderr that it cannot read a server
// that is down and looks again, takes up after the restart, and stops with
// the alert once the log is rewritten under it.
func TestLogMonitorFollows(t *testing.T) {
	dir, backup := t.TempDir(), t.TempDir()
	s := newRestartable(t, dir)
	alice, _, err := s.svc.AddPrincipal(t.Context(), custody.PrincipalInput{Tenant: "acme", Name: "alice", Roles: []string{"user"}})
	if err != nil {
		t.Fatal(err)
	}
	_, auditorToken, err := s.svc.AddPrincipal(t.Context(), custody.PrincipalInput{Tenant: "acme", Name: "audra", Roles: []string{"auditor"}})
	if err != nil {
		t.Fatal(err)
	}
	vkey, err := s.svc.VerifierKey("acme")
	if err != nil {
		t.Fatal(err)
	}
	first := s.writeBatches(t, alice, 20, "first")
	t.Setenv("CUSTODY_TOKEN", auditorToken)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stdout, stderr := &watch{serving: make(chan struct{})}, &watch{serving: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		done <- runLog(ctx, []string{"monitor", "--interval", "20ms", "--url", s.url + "/log/" + s.svc.LogIDs().ID("acme"),
			"--verifier", vkey, "--pin", filepath.Join(t.TempDir(), "pin")}, stdout, stderr)
	}()
	printed := func(index uint64) func() bool {
		return func() bool { return strings.Contains(stdout.String(), fmt.Sprintf("entry %d at ", index)) }
	}
	waitFor(t, "the first entries", printed(first-1), stdout)

	s.stop()
	copyFiles(t, dir, backup, "c.db", "c.db-wal", "c.db-shm", "c.db.key")
	waitFor(t, "the monitor to say it cannot read the server", func() bool { return strings.Contains(stderr.String(), "looking again in 20ms") }, stderr)
	s.start()
	second := s.writeBatches(t, alice, 20, "second")
	waitFor(t, "the entries written after the restart", printed(second-1), stdout)
	if n := strings.Count(stdout.String(), "\nentry "); n != int(second) {
		t.Fatalf("printed %d entries of %d:\n%s", n, second, stdout)
	}
	select {
	case err := <-done:
		t.Fatalf("the monitor stopped on an honest log: %v", err)
	default:
	}

	s.stop()
	copyFiles(t, backup, dir, "c.db", "c.db-wal", "c.db-shm", "c.db.key")
	s.start()
	s.writeBatches(t, alice, int(second-first)+5, "rewritten")
	select {
	case err := <-done:
		if !errors.Is(err, logmonitor.ErrInconsistent) || !strings.HasPrefix(err.Error(), "ALERT: ") {
			t.Fatalf("the monitor on a rewritten log: %v; want the alert", err)
		}
	case <-time.After(witnessDeadline):
		t.Fatalf("the monitor did not stop on a rewritten log:\n%s\n%s", stdout, stderr)
	}
}

// A server that serves an entry bundle other than the leaves its tree
// commits to (a principal's name changed in one leaf) is an alert, and the
// pin stays; the same log served as it is passes.
func TestLogMonitorCatchesAlteredBundle(t *testing.T) {
	s := newRestartable(t, t.TempDir())
	alice, _, err := s.svc.AddPrincipal(t.Context(), custody.PrincipalInput{Tenant: "acme", Name: "alice", Roles: []string{"user"}})
	if err != nil {
		t.Fatal(err)
	}
	_, auditorToken, err := s.svc.AddPrincipal(t.Context(), custody.PrincipalInput{Tenant: "acme", Name: "audra", Roles: []string{"auditor"}})
	if err != nil {
		t.Fatal(err)
	}
	vkey, err := s.svc.VerifierKey("acme")
	if err != nil {
		t.Fatal(err)
	}
	s.writeBatches(t, alice, 5, "note")
	args := func() []string {
		return []string{"monitor", "--once", "--url", s.url + "/log/" + s.svc.LogIDs().ID("acme"), "--verifier", vkey, "--pin", filepath.Join(t.TempDir(), "pin")}
	}
	if out := mustRun(t, auditorToken, runLog, args()...); !strings.Contains(out, "entry 6 at ") {
		t.Fatalf("monitor --once of the log as it is:\n%s", out)
	}

	honest := *s.handler.Load()
	var altered http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.URL.Path, "/tile/entries/") {
			honest.ServeHTTP(w, r)
			return
		}
		r.Header.Del("Accept-Encoding")
		rec := httptest.NewRecorder()
		honest.ServeHTTP(rec, r)
		w.WriteHeader(rec.Code)
		w.Write(bytes.Replace(rec.Body.Bytes(), []byte("acme/alice"), []byte("acme/alicf"), 1))
	})
	s.handler.Store(&altered)
	pin := args()
	_, _, err = run(t, auditorToken, runLog, pin...)
	if !errors.Is(err, logmonitor.ErrBadEntry) || !strings.HasPrefix(err.Error(), "ALERT: ") || !strings.Contains(err.Error(), "does not match the log's tree") {
		t.Fatalf("monitor --once of an altered bundle = %v; want the alert", err)
	}
	if _, err := os.Stat(pin[len(pin)-1]); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the monitor pinned a log whose bundle was altered (%v)", err)
	}
}
