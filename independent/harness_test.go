package independent_test

import (
	"bufio"
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
	"sync"
	"testing"
	"time"

	"filippo.io/torchwood"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// deadline bounds every wait; each ends as soon as what it waits for is
// seen.
const deadline = 90 * time.Second

// output collects a process's output, safe for concurrent use.
type output struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.Write(p)
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

// waitFor polls ok until it holds, or fails with log after deadline.
func waitFor(t *testing.T, what string, ok func() bool, log fmt.Stringer) {
	t.Helper()
	end := time.Now().Add(deadline)
	for !ok() {
		if time.Now().After(end) {
			t.Fatalf("gave up waiting for %s; log:\n%s", what, log)
		}
		time.Sleep(50 * time.Millisecond) // polling interval, not synchronisation
	}
}

// goBuild builds the packages into dir with go itself.
func goBuild(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// custodyBin builds the custody binary of this module.
func custodyBin(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "custody")
	goBuild(t, dir, "build", "-o", bin, "../cmd/custody")
	return bin
}

// run runs the custody binary and returns its stdout.
func run(t *testing.T, bin string, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("custody %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return strings.TrimSpace(out.String())
}

// witness is a litewitness (filippo.io/torchwood v0.6.1) on loopback.
type witness struct {
	url, vkey string
	log       *output
}

// startWitness builds and runs litewitness, knowing the logs of list, a
// C2SP tlog-list (what custody log list prints), which witnessctl
// pull-logs reads; it signs through an ssh-agent served here.
func startWitness(t *testing.T, list string) witness {
	t.Helper()
	dir := t.TempDir()
	goBuild(t, dir, "install", "filippo.io/torchwood/cmd/litewitness@v0.6.1", "filippo.io/torchwood/cmd/witnessctl@v0.6.1")
	db := filepath.Join(dir, "w.db")
	listFile := filepath.Join(dir, "logs.txt")
	if err := os.WriteFile(listFile, []byte(list), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(filepath.Join(dir, "witnessctl"), "pull-logs", "-db", db, "-source", listFile).CombinedOutput(); err != nil {
		t.Fatalf("witnessctl pull-logs: %v\n%s", err, out)
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	keyring := agent.NewKeyring()
	if err := keyring.Add(agent.AddedKey{PrivateKey: priv}); err != nil {
		t.Fatal(err)
	}
	sockDir, err := os.MkdirTemp("", "agent") // a socket path is at most 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	sock := filepath.Join(sockDir, "s")
	al, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { al.Close() })
	go func() {
		for {
			c, err := al.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); agent.ServeAgent(keyring, c) }()
		}
	}()
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	const name = "example.com/independent-witness"
	cs, err := torchwood.NewCosignatureSigner(name, priv)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	w := witness{url: "http://" + addr, vkey: cs.Verifier().String(), log: &output{}}
	cmd := exec.Command(filepath.Join(dir, "litewitness"), "-db", db, "-name", name,
		"-key", ssh.FingerprintSHA256(sshPub), "-ssh-agent", sock, "-listen", addr)
	cmd.Stdout, cmd.Stderr = w.log, w.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitFor(t, "litewitness to listen", func() bool {
		res, err := http.Get(w.url + "/")
		if err == nil {
			res.Body.Close()
		}
		return err == nil
	}, w.log)
	return w
}

var servingRE = regexp.MustCompile(`custody is serving on (http://\S+)`)

// serve runs custody serve with args on a loopback port and returns its
// URL and output.
func serve(t *testing.T, bin string, args ...string) (string, *output) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	log := &output{}
	cmd.Stdout = log
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); cmd.Wait() })
	go func() {
		s := bufio.NewScanner(stderr)
		for s.Scan() {
			log.Write(append(s.Bytes(), '\n'))
		}
	}()
	var url string
	waitFor(t, "custody serve to listen", func() bool {
		m := servingRE.FindStringSubmatch(log.String())
		if m != nil {
			url = m[1]
		}
		return m != nil
	}, log)
	return url, log
}

// call sends a JSON request with a bearer token ("" for none) and decodes
// the answer into out (nil: discard), failing unless it has status want.
func call(t *testing.T, token, method, url string, in, out any, want int) {
	t.Helper()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != want {
		t.Fatalf("%s %s: %d %s, want %d", method, url, res.StatusCode, b, want)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, url, err, b)
		}
	}
}

// get fetches url without a token; status and body.
func get(url string) (int, []byte, http.Header) {
	res, err := http.Get(url)
	if err != nil {
		return 0, nil, nil
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b, res.Header
}

// bearer adds a bearer token to every request.
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// publishedPath is where tenant's log is published by the server of the
// store of storeArgs: the path of the URL custody log list --json gives
// (docs/log-format.md: /log/ and an ID that is not the tenant's name).
func publishedPath(t *testing.T, bin, tenant string, storeArgs ...string) string {
	t.Helper()
	out := run(t, bin, append([]string{"log", "list", "--json", "--tenant", tenant, "--url", "http://server"}, storeArgs...)...)
	var logs []struct {
		Tenant, Origin, VKey, URL string
	}
	if err := json.Unmarshal([]byte(out), &logs); err != nil || len(logs) != 1 || logs[0].Tenant != tenant {
		t.Fatalf("custody log list --json --tenant %s: %v %q", tenant, err, out)
	}
	path := strings.TrimPrefix(logs[0].URL, "http://server")
	if !strings.HasPrefix(path, "/log/") || strings.Contains(path, tenant) {
		t.Fatalf("%s's log is published at %q: want /log/ and an ID that is not the tenant's name", tenant, path)
	}
	return path
}
