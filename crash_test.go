package custody_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/tlog"
)

var crashRuns = flag.Int("custody.crashes", 20, "SIGKILL rounds in TestCrashSafety (1000 for the long run)")

// TestCrashChild is the writer that TestCrashSafety kills; it only runs in
// the child process.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv("CUSTODY_CRASH_CHILD")
	if dir == "" {
		t.Skip("runs only as TestCrashSafety's child")
	}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "custody.db"))
	if err != nil {
		t.Fatal(err)
	}
	key, _, err := tlog.LoadOrCreateServerKey(filepath.Join(dir, "server.key"))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := custody.New(st, key, custody.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var p *custody.Principal
	st.View(ctx, func(tx custody.Tx) error { p, err = tx.Principal(ctx, "acme", "alice"); return err })
	if err != nil {
		t.Fatal(err)
	}
	c, _ := svc.Act(ctx, p, "")
	out := bufio.NewWriter(os.Stdout)
	for i := 0; ; i++ {
		d, err := svc.Remember(ctx, c, custody.Candidate{Namespace: "crash", Class: "episode", Body: fmt.Sprintf("write %d of %d", i, os.Getpid()), Channel: "user"})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(out, "ack %s\n", d.ID)
		if i%7 == 0 {
			cp, err := svc.Checkpoint(ctx, "acme")
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(out, "cp %s\n", base64.StdEncoding.EncodeToString(cp))
		}
		out.Flush()
	}
}

// A writer killed with SIGKILL at random moments loses no acknowledged
// write, leaves a contiguous log that verifies, and stays consistent with
// every checkpoint it published. The moment is chosen by what the test
// observes, not by the clock: each round kills the child once it has
// reported a random number of acknowledged writes (and, in the first round,
// a checkpoint), however slowly a loaded machine runs it.
func TestCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	e := newEnvAt(t, dir, custody.Options{})
	e.principal("acme", "alice", []string{"user"}, nil, nil)
	e.store.Close()
	var acked []string
	var cps [][]byte
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range *crashRuns {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.v=false")
		cmd.Env = append(os.Environ(), "CUSTODY_CRASH_CHILD="+dir)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		killAfter := 1 + rng.IntN(40) // acknowledged writes this round
		roundAcks, killed := 0, false
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			kind, val, _ := strings.Cut(sc.Text(), " ")
			switch kind {
			case "ack":
				acked = append(acked, val)
				roundAcks++
			case "cp":
				b, err := base64.StdEncoding.DecodeString(val)
				if err == nil {
					cps = append(cps, b)
				}
			}
			if !killed && roundAcks >= killAfter && len(cps) > 0 {
				cmd.Process.Signal(syscall.SIGKILL)
				killed = true
			}
		}
		err = cmd.Wait()
		if !killed {
			t.Fatalf("round %d: the child ended by itself after %d writes (%v):\n%s", round, roundAcks, err, stderr.String())
		}
		// After every kill: all acknowledged writes present, verify passes.
		e2 := newEnvAt(t, dir, custody.Options{})
		if _, err := e2.svc.Verify(e2.ctx, custody.VerifyOptions{Checkpoints: cps}); err != nil {
			t.Fatalf("round %d (killed after %d acknowledged writes): verify: %v", round, killAfter, err)
		}
		err = e2.store.View(e2.ctx, func(tx custody.Tx) error {
			for _, id := range acked {
				if _, err := tx.Record(e2.ctx, "acme", id); err != nil {
					return fmt.Errorf("acknowledged write %s: %w", id, err)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		// The last writes were likely still waiting for the search indexes
		// when the writer died: search finds them all the same.
		for _, id := range acked[max(0, len(acked)-3):] {
			r, err := e2.svc.Get(e2.ctx, e2.act(mustPrincipal(t, e2, "acme", "alice"), ""), id)
			if err != nil {
				t.Fatalf("round %d: get %s: %v", round, id, err)
			}
			hits, err := e2.svc.Search(e2.ctx, e2.act(mustPrincipal(t, e2, "acme", "alice"), ""), custody.SearchInput{Query: r.Body, Limit: custody.MaxSearchLimit})
			if err != nil || !slices.ContainsFunc(hits, func(h custody.Scored) bool { return h.Record.ID == id }) {
				t.Fatalf("round %d: search for %q after the kill = %d hits, %v; want %s among them", round, r.Body, len(hits), err, id)
			}
		}
		e2.store.Close()
	}
	if len(acked) == 0 || len(cps) == 0 {
		t.Fatalf("the child acknowledged %d writes and %d checkpoints; the test measured nothing", len(acked), len(cps))
	}
	t.Logf("%d rounds, %d acknowledged writes, %d checkpoints", *crashRuns, len(acked), len(cps))
}
