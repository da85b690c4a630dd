package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"filippo.io/torchwood"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// witnessDeadline bounds every wait for the witness or the server: long,
// because the machine may be loaded; each wait ends as soon as what it
// waits for is seen.
const witnessDeadline = 90 * time.Second

// buildLitewitness builds torchwood's litewitness and witnessctl (v0.6.1)
// into a temporary directory.
func buildLitewitness(t *testing.T) (litewitness, witnessctl string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds litewitness: not in -short")
	}
	dir := t.TempDir()
	cmd := exec.Command("go", "install", "filippo.io/torchwood/cmd/litewitness@v0.6.1", "filippo.io/torchwood/cmd/witnessctl@v0.6.1")
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building litewitness: %v\n%s", err, out)
	}
	return filepath.Join(dir, "litewitness"), filepath.Join(dir, "witnessctl")
}

// sshAgent serves an ssh-agent holding priv on a unix socket, as
// litewitness signs through one.
func sshAgent(t *testing.T, priv ed25519.PrivateKey) string {
	t.Helper()
	keyring := agent.NewKeyring()
	if err := keyring.Add(agent.AddedKey{PrivateKey: priv}); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "agent") // short: a socket path is at most 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); agent.ServeAgent(keyring, c) }()
		}
	}()
	return sock
}

// liteWitness is a litewitness on loopback, which can be stopped and
// started again with its database, key and address.
type liteWitness struct {
	url, vkey string
	stderr    *watch
	start     func()
	stop      func()
}

// startLitewitness runs litewitness with a fresh key, knowing the logs
// of the C2SP tlog-list list (what custody log list prints), which
// witnessctl pull-logs reads.
func startLitewitness(t *testing.T, list string) liteWitness {
	t.Helper()
	w := newLitewitness(t, list)
	w.start()
	return w
}

// newLitewitness sets up a litewitness (database, key, address) without
// starting it.
func newLitewitness(t *testing.T, list string) liteWitness {
	t.Helper()
	bin, ctl := buildLitewitness(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "w.db")
	listFile := filepath.Join(dir, "logs.txt")
	if err := os.WriteFile(listFile, []byte(list), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(ctl, "pull-logs", "-db", db, "-source", listFile).CombinedOutput(); err != nil {
		t.Fatalf("witnessctl pull-logs: %v\n%s", err, out)
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	const name = "example.com/witness"
	signer, err := torchwood.NewCosignatureSigner(name, priv)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	sock := sshAgent(t, priv)
	w := liteWitness{url: "http://" + addr, vkey: signer.Verifier().String(), stderr: &watch{serving: make(chan struct{})}}
	var cmd *exec.Cmd
	w.stop = func() {
		if cmd != nil {
			cmd.Process.Kill()
			cmd.Wait()
			cmd = nil
		}
	}
	w.start = func() {
		t.Helper()
		cmd = exec.Command(bin, "-db", db, "-name", name, "-key", ssh.FingerprintSHA256(sshPub), "-ssh-agent", sock, "-listen", addr)
		cmd.Stderr = w.stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "litewitness to listen", func() bool {
			res, err := http.Get(w.url + "/")
			if err != nil {
				return false
			}
			res.Body.Close()
			return true
		}, w.stderr)
	}
	t.Cleanup(w.stop)
	return w
}

// waitFor polls ok until it holds, failing with what log shows after
// witnessDeadline.
func waitFor(t *testing.T, what string, ok func() bool, log fmt.Stringer) {
	t.Helper()
	deadline := time.Now().Add(witnessDeadline)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s; log:\n%s", what, log)
		}
		time.Sleep(50 * time.Millisecond) // polling interval, not synchronisation
	}
}

// served is a custody serve running in the test.
type served struct {
	url    string
	stderr *watch
	stop   func()
	// logPath is where acme's log is published (/log/ and its ID), set by
	// the tests that read it.
	logPath string
}

// logList is what custody log list prints for the store of storeArgs.
func logList(t *testing.T, storeArgs ...string) string {
	t.Helper()
	code, out, msg := cli(append([]string{"log", "list"}, storeArgs...)...)
	if code != 0 {
		t.Fatalf("log list: %s", msg)
	}
	return out
}

// logPathOf is where tenant's log of the store of storeArgs is published:
// /log/ and its ID, as custody log list --json gives it.
func logPathOf(t *testing.T, tenant string, storeArgs ...string) string {
	t.Helper()
	code, out, msg := cli(append([]string{"log", "list", "--json", "--tenant", tenant, "--url", "http://x"}, storeArgs...)...)
	if code != 0 {
		t.Fatalf("log list: %s", msg)
	}
	var logs []listedLog
	if err := json.Unmarshal([]byte(out), &logs); err != nil || len(logs) != 1 {
		t.Fatalf("log list --json: %v %q", err, out)
	}
	return strings.TrimPrefix(logs[0].URL, "http://x")
}

var servingURL = regexp.MustCompile(`custody is serving on (http://\S+)`)

func runServed(t *testing.T, args ...string) served {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	w := &watch{serving: make(chan struct{})}
	done := make(chan error, 1)
	go func() { done <- runServe(ctx, append([]string{"--addr", "127.0.0.1:0"}, args...), io.Discard, w) }()
	select {
	case err := <-done:
		cancel()
		t.Fatalf("serve: %v\n%s", err, w)
	case <-w.serving:
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			if err := <-done; err != nil {
				t.Errorf("serve: %v", err)
			}
		}
	}
	t.Cleanup(stop)
	return served{url: servingURL.FindStringSubmatch(w.String())[1], stderr: w, stop: stop}
}

// write remembers n episodes and returns the log index of the last.
func (s served) write(t *testing.T, token string, n int, prefix string) uint64 {
	t.Helper()
	var idx uint64
	for i := range n {
		body := fmt.Sprintf(`{"namespace":"n","class":"episode","body":"%s %d","channel":"user"}`, prefix, i)
		req, _ := http.NewRequest("POST", s.url+"/v1/memories", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			LogIndex uint64 `json:"log_index"`
		}
		err = json.NewDecoder(res.Body).Decode(&d)
		res.Body.Close()
		if err != nil || res.StatusCode != 201 {
			t.Fatalf("remember: %d %v", res.StatusCode, err)
		}
		idx = d.LogIndex
	}
	return idx
}

// checkpoint is the anonymous checkpoint of the server.
func (s served) checkpoint() string {
	res, err := http.Get(s.url + s.logPath + "/checkpoint")
	if err != nil {
		return ""
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

// waitCosigned waits until the served checkpoint covers the log up to
// index last and carries the witness's cosignature.
func (s served) waitCosigned(t *testing.T, w liteWitness, last uint64) string {
	t.Helper()
	var cp string
	waitFor(t, fmt.Sprintf("a cosigned checkpoint of size %d", last+1), func() bool {
		cp = s.checkpoint()
		lines := strings.SplitN(cp, "\n", 3)
		return len(lines) == 3 && lines[1] == fmt.Sprint(last+1) && strings.Contains(cp, "\n— example.com/witness ")
	}, s.stderr)
	return cp
}

// TestWitnessCosignsAndVerifyCatchesRewrite runs a real C2SP witness
// (torchwood's litewitness) beside custody serve --witness: the
// checkpoints gather its cosignatures, which verify --witness checks; a
// history rebuilt from an older copy of the store (what someone holding
// the key file can do) is refused by the witness, and verify with the
// witness key reports it, while a plain verify cannot tell.
func TestWitnessCosignsAndVerifyCatchesRewrite(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	const logName = "example.com/custody-test/log"
	const origin = logName + "/acme" // acme's log
	store := []string{"--db", db, "--origin", logName}
	code, token, stderr := cli(append([]string{"principal", "add", "--tenant", "acme", "--name", "alice", "--role", "user"}, store...)...)
	if code != 0 {
		t.Fatalf("principal add: %s", stderr)
	}
	token = strings.TrimSpace(token)
	w := startLitewitness(t, logList(t, store...))
	logPath := logPathOf(t, "acme", store...)
	serveArgs := append([]string{"--witness", w.url + "=" + w.vkey, "--checkpoint-interval", "100ms"}, store...)

	// An honest server: every checkpoint is cosigned.
	s := runServed(t, serveArgs...)
	s.logPath = logPath
	cp := s.waitCosigned(t, w, s.write(t, token, 3, "first"))
	if !bytes.HasPrefix([]byte(cp), []byte(origin+"\n")) {
		t.Fatalf("checkpoint %q of another origin", cp)
	}
	for _, path := range []string{"/v1/log/checkpoint", "/v1/log/status"} {
		req, _ := http.NewRequest("GET", s.url+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !strings.Contains(string(b), "— example.com/witness ") {
			t.Fatalf("GET %s = %d %s; want the checkpoint with its cosignature", path, res.StatusCode, b)
		}
	}
	s.stop()
	backup := t.TempDir()
	copyDir(t, dir, backup)

	s = runServed(t, serveArgs...)
	s.logPath = logPath
	n2 := s.write(t, token, 3, "second")
	s.waitCosigned(t, w, n2)
	s.stop()
	verifyArgs := append([]string{"--witness", w.vkey, "--min-witnesses", "1"}, store...)
	if out, errOut, err := verifyOut(t, verifyArgs...); err != nil || !strings.HasPrefix(out, "ok: ") {
		t.Fatalf("verify --witness of the honest store = %v, %q, %q; want ok", err, out, errOut)
	}
	asking := append([]string{"--witness", w.url + "=" + w.vkey}, store...)
	if out, errOut, err := verifyOut(t, asking...); err != nil || !strings.HasPrefix(out, "ok: ") {
		t.Fatalf("verify --witness URL=VKEY of the honest store = %v, %q, %q; want ok", err, out, errOut)
	}
	// verify --min-witnesses beyond the keys given is a usage error.
	if _, _, err := verifyOut(t, append([]string{"--witness", w.vkey, "--min-witnesses", "2"}, store...)...); err == nil {
		t.Fatal("verify --min-witnesses 2 with one witness key passed")
	}

	// Rolled back to the older copy, witness table and all: its latest
	// checkpoint still carries the witness's older cosignature, so only
	// asking the witness tells.
	copyDir(t, backup, dir)
	if out, _, err := verifyOut(t, verifyArgs...); err != nil || !strings.HasPrefix(out, "ok: ") {
		t.Fatalf("verify --witness VKEY of the rolled-back store = %v, %q; the stored cosignature holds", err, out)
	}
	_, _, err := verifyOut(t, asking...)
	if err == nil || !strings.Contains(err.Error(), "rolled back") || !strings.Contains(err.Error(), "holds a larger tree") {
		t.Fatalf("verify --witness URL=VKEY of the rolled-back store = %v; want the witness's refusal", err)
	}

	// The insider: the store put back to the older copy, checkpoint file
	// and witness table with it. serve asks the witness before it
	// publishes anything, and refuses: the witness cosigned more.
	copyDir(t, backup, dir)
	err, log := serveOnce(t, serveArgs...)
	if err == nil || !strings.Contains(err.Error(), "a witness cosigned more of a log than the store holds") || !strings.Contains(err.Error(), "more than the") {
		t.Fatalf("serve of the rolled-back store = %v\n%s; want the witness's larger tree named", err, log)
	}
	// Written on offline past what the witness saw, with other entries:
	// the witness holds another history, and serve refuses again.
	for i := range 4 {
		if code, _, msg := cli(append([]string{"principal", "add", "--tenant", "acme", "--name", fmt.Sprintf("mallory%d", i), "--role", "user"}, store...)...); code != 0 {
			t.Fatalf("principal add: %s", msg)
		}
	}
	err, log = serveOnce(t, serveArgs...)
	if err == nil || !strings.Contains(err.Error(), "another history") {
		t.Fatalf("serve of the rewritten store = %v\n%s; want the witness's other history named", err, log)
	}
	// Forced on with --accept-rollback, it serves, and the witness refuses
	// every checkpoint of the rewritten log.
	s = runServed(t, append(serveArgs, "--accept-rollback")...)
	s.logPath = logPath
	s.write(t, token, 6, "another history")
	waitFor(t, "the witness to refuse the rewritten history", func() bool {
		return strings.Contains(s.stderr.String(), "bad consistency proof")
	}, s.stderr)
	if strings.Contains(s.checkpoint(), "\n— example.com/witness ") {
		t.Fatalf("the rewritten log's checkpoint carries a cosignature:\n%s", s.checkpoint())
	}
	s.stop()
	if out, _, err := verifyOut(t, store...); err != nil || !strings.HasPrefix(out, "ok: ") {
		t.Fatalf("plain verify of the rewritten store = %v, %q; it holds together without the witness", err, out)
	}
	_, _, err = verifyOut(t, verifyArgs...)
	if err == nil || !strings.Contains(err.Error(), "0 valid witness cosignatures of the 1 required") {
		t.Fatalf("verify --witness of the rewritten store = %v; want it to report the missing cosignature", err)
	}
	_, _, err = verifyOut(t, asking...)
	if err == nil || !strings.Contains(err.Error(), "bad consistency proof") {
		t.Fatalf("verify --witness URL=VKEY of the rewritten store = %v; want the witness's refusal", err)
	}
}

// copyDir makes to hold exactly the files of from.
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	old, _ := os.ReadDir(to)
	for _, e := range old {
		os.Remove(filepath.Join(to, e.Name()))
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	copyFiles(t, from, to, names...)
}
