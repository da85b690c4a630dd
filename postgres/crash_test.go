package postgres_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/httpapi"
	"github.com/custody-mem/custody/postgres"
	"github.com/custody-mem/custody/tlog"
)

var pgCrashRuns = flag.Int("custody.pgcrashes", 3, "SIGKILL rounds in TestCrashSafetyOnPostgres")

// TestCrashChildOnPostgres is the server TestCrashSafetyOnPostgres kills:
// custody's HTTP API on PostgreSQL, as serve runs it. It only runs in the
// child process, and reports its address, the checkpoints it signs and
// the store's counts of batches run ahead on its standard output.
func TestCrashChildOnPostgres(t *testing.T) {
	dir := os.Getenv("CUSTODY_PG_CRASH_CHILD")
	if dir == "" {
		t.Skip("runs only as TestCrashSafetyOnPostgres's child")
	}
	ctx := context.Background()
	st, err := postgres.Open(ctx, os.Getenv("CUSTODY_PG_CRASH_DSN"))
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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go http.Serve(ln, httpapi.New(svc, httpapi.Options{RatePerSecond: -1, Logger: slog.New(slog.DiscardHandler)}).Handler())
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, format+"\n", args...)
		out.Flush()
	}
	say("addr http://%s", ln.Addr())
	for {
		cp, err := svc.Checkpoint(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		a := st.AheadStats()
		say("cp %s", base64.StdEncoding.EncodeToString(cp))
		say("ahead %d %d", a.Applied, a.Batches)
		time.Sleep(20 * time.Millisecond) // a checkpoint now and then, not a busy loop
	}
}

// A custody server on PostgreSQL killed with SIGKILL while eight clients
// write through it, their writes committed in batches of several in one
// round trip each, loses no acknowledged write (one whose 201 a client
// read), and leaves logs that verify, consistent with every checkpoint it
// published. Each round kills the server once the clients have read a
// random number of acknowledgements and it has published a checkpoint:
// the moment is chosen by what the test observes, not by the clock.
func TestCrashSafetyOnPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	ctx := t.Context()
	dir := t.TempDir()
	dsn := newDatabase(t)
	key, _, err := tlog.LoadOrCreateServerKey(filepath.Join(dir, "server.key"))
	if err != nil {
		t.Fatal(err)
	}
	st := openDSN(t, dsn)
	svc, err := custody.New(st, key, custody.Options{})
	if err != nil {
		t.Fatal(err)
	}
	alice, tok, err := svc.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: "alice", Roles: []string{"user"}})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	var mu sync.Mutex
	var acked []string
	var cps [][]byte
	var applied, batches int64
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range *pgCrashRuns {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChildOnPostgres$", "-test.v=false")
		cmd.Env = append(os.Environ(), "CUSTODY_PG_CRASH_CHILD="+dir, "CUSTODY_PG_CRASH_DSN="+dsn)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		killAfter := 20 + rng.IntN(80) // acknowledged writes this round
		roundCps := 0
		acks := make(chan string)
		stop := make(chan struct{})
		var clients sync.WaitGroup
		sc := bufio.NewScanner(stdout)
		addr := ""
		for addr == "" && sc.Scan() {
			addr, _ = strings.CutPrefix(sc.Text(), "addr ")
		}
		if addr == "" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("round %d: the server did not start:\n%s", round, stderr.String())
		}
		lines := make(chan string)
		go func() {
			defer close(lines)
			for sc.Scan() {
				lines <- sc.Text()
			}
		}()
		for c := range 8 {
			clients.Go(func() {
				for i := 0; ; i++ {
					id, err := postMemory(addr, tok, fmt.Sprintf("round %d client %d write %d", round, c, i))
					if err != nil {
						return // the server is gone
					}
					select {
					case acks <- id:
					case <-stop:
						mu.Lock()
						acked = append(acked, id) // read before the kill, not yet counted
						mu.Unlock()
						return
					}
				}
			})
		}
		roundAcks, killed := 0, false
		var roundApplied, roundBatches int64
		for !killed {
			select {
			case id := <-acks:
				mu.Lock()
				acked = append(acked, id)
				mu.Unlock()
				roundAcks++
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("round %d: the server ended by itself after %d writes:\n%s", round, roundAcks, stderr.String())
				}
				kind, val, _ := strings.Cut(l, " ")
				switch kind {
				case "cp":
					if b, err := base64.StdEncoding.DecodeString(val); err == nil {
						cps = append(cps, b)
						if roundAcks >= killAfter {
							roundCps++ // published after this round's writes were acknowledged
						}
					}
				case "ahead":
					fmt.Sscan(val, &roundApplied, &roundBatches)
				}
			}
			if roundAcks >= killAfter && roundCps > 0 {
				cmd.Process.Signal(syscall.SIGKILL)
				killed = true
			}
		}
		close(stop)
		for range lines { // the server's last lines (the applied counts before the kill)
		}
		clients.Wait()
		cmd.Wait()
		applied += roundApplied
		batches += roundBatches

		st := openDSN(t, dsn)
		svc, err := custody.New(st, key, custody.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Verify(ctx, custody.VerifyOptions{Checkpoints: cps}); err != nil {
			t.Fatalf("round %d (killed after %d acknowledged writes): verify: %v", round, roundAcks, err)
		}
		c := &custody.Caller{Principal: alice, Subject: alice}
		for _, id := range acked {
			if _, err := svc.Get(ctx, c, id); err != nil {
				t.Fatalf("round %d: acknowledged write %s: %v", round, id, err)
			}
		}
		st.Close()
	}
	// The counts each server reported last, before its kill, summed over
	// the rounds. Each round's last report follows a checkpoint published
	// after the round's writes were acknowledged, so it counts them.
	if applied == 0 || batches == 0 || applied <= batches {
		t.Fatalf("the servers applied %d writes in %d batches in one round trip each; the test wanted batches of several", applied, batches)
	}
	t.Logf("%d rounds, %d acknowledged writes, %d checkpoints; the servers: %d writes in %d batches in one round trip each",
		*pgCrashRuns, len(acked), len(cps), applied, batches)
}

// postMemory writes a memory through the server at addr and returns its id
// once the server acknowledged it.
func postMemory(addr, tok, body string) (string, error) {
	raw, _ := json.Marshal(map[string]any{"namespace": "crash", "class": "episode", "body": body, "channel": "user"})
	req, _ := http.NewRequest("POST", addr+"/v1/memories", bytes.NewReader(raw))
	req.Header.Set("Authorization", "Bearer "+tok)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		return "", err
	}
	if res.StatusCode != http.StatusCreated {
		return "", fmt.Errorf("status %d: %s", res.StatusCode, out)
	}
	var d custody.Decision
	if err := json.Unmarshal(out, &d); err != nil {
		return "", err
	}
	return d.ID, nil
}
