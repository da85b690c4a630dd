package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// get fetches url with an optional bearer token: status and body.
func getWith(t *testing.T, token, url string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// sizeOf is the tree size of a checkpoint text, "" when it is none.
func sizeOf(cp string) string {
	lines := strings.SplitN(cp, "\n", 3)
	if len(lines) < 3 {
		return ""
	}
	return lines[1]
}

// TestWitnessPolicyGatesPublishing runs serve with a C2SP witness policy
// of one witness (a real litewitness), quorum of it: a checkpoint is
// served as current only once the witness cosigned it. While the witness
// is down, the current checkpoint stays the last cosigned one and the
// newest is served apart (latest-checkpoint, ?latest=true); once it is
// back, the current one catches up. A client pin with the policy accepts
// the current checkpoint, and refuses it when its cosignature is older
// than --max-age; verify --witness-policy agrees with the store.
func TestWitnessPolicyGatesPublishing(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	store := []string{"--db", db}
	code, tok, msg := cli(append([]string{"principal", "add", "--tenant", "acme", "--name", "alice", "--role", "user"}, store...)...)
	if code != 0 {
		t.Fatalf("principal add: %s", msg)
	}
	token := strings.TrimSpace(tok)
	w := newLitewitness(t, logList(t, store...))
	policy := filepath.Join(dir, "policy.txt")
	if err := os.WriteFile(policy, []byte("# one witness, required\nwitness w1 "+w.vkey+" "+w.url+"\nquorum w1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	serveArgs := append([]string{"--witness-policy", policy, "--checkpoint-interval", "100ms"}, store...)

	// The witness is down: nothing met the policy.
	s := runServed(t, serveArgs...)
	s.logPath = logPathOf(t, "acme", store...)
	if !strings.Contains(s.stderr.String(), "could not be asked what it holds") {
		t.Fatalf("serve with its witness down did not warn:\n%s", s.stderr)
	}
	n := s.write(t, token, 3, "first") + 1
	waitFor(t, "the newest checkpoint", func() bool {
		_, cp := getWith(t, "", s.url+s.logPath+"/latest-checkpoint")
		return sizeOf(cp) == fmt.Sprint(n)
	}, s.stderr)
	if status, body := getWith(t, "", s.url+s.logPath+"/checkpoint"); status != 404 {
		t.Fatalf("the current checkpoint before any cosignature = %d %s; want 404", status, body)
	}
	if status, body := getWith(t, token, s.url+"/v1/log/checkpoint"); status != 404 || !strings.Contains(body, "witness policy") {
		t.Fatalf("GET /v1/log/checkpoint before any cosignature = %d %s; want 404 naming the policy", status, body)
	}
	if status, body := getWith(t, token, s.url+"/v1/log/checkpoint?latest=true"); status != 200 || sizeOf(body) != fmt.Sprint(n) {
		t.Fatalf("GET /v1/log/checkpoint?latest=true = %d %s; want the newest, of %d entries", status, body, n)
	}

	// The witness comes up: the checkpoint is cosigned, then current.
	w.start()
	var current string
	waitFor(t, "a current checkpoint", func() bool {
		status, cp := getWith(t, "", s.url+s.logPath+"/checkpoint")
		current = cp
		return status == 200 && sizeOf(cp) == fmt.Sprint(n)
	}, s.stderr)
	if !strings.Contains(current, "\n— example.com/witness ") {
		t.Fatalf("the current checkpoint carries no cosignature:\n%s", current)
	}
	if status, body := getWith(t, token, s.url+"/v1/log/checkpoint"); status != 200 || body != current {
		t.Fatalf("GET /v1/log/checkpoint = %d %q; want the current checkpoint %q", status, body, current)
	}

	// A client holding the log to the policy pins it; with a maximum age
	// its cosignature does not meet, it refuses.
	pin := filepath.Join(t.TempDir(), "pin")
	vkey := strings.TrimSpace(must(cli(append([]string{"log", "key", "--tenant", "acme"}, store...)...)))
	t.Setenv("CUSTODY_URL", s.url)
	t.Setenv("CUSTODY_TOKEN", token)
	if code, out, msg := cli("log", "checkpoint", "--pin", pin, "--verifier", vkey, "--witness-policy", policy); code != 0 || !strings.Contains(out, "ok: pinned") {
		t.Fatalf("log checkpoint --pin --witness-policy = %d %q %q", code, out, msg)
	}
	if code, _, msg := cli("log", "checkpoint", "--pin", pin, "--verifier", vkey, "--witness-policy", policy, "--max-age", "1ns"); code == 0 || !strings.Contains(msg, "does not meet the witness policy") || !strings.Contains(msg, "made since") {
		t.Fatalf("log checkpoint with cosignatures older than --max-age = %d %q; want a refusal naming the policy and the age", code, msg)
	}
	// A policy whose witness this server never had cosign: refused.
	other := newLitewitness(t, logList(t, store...))
	otherPolicy := filepath.Join(dir, "other.txt")
	os.WriteFile(otherPolicy, []byte("witness w2 "+other.vkey+"\nquorum w2\n"), 0o600)
	if code, _, msg := cli("log", "checkpoint", "--pin", pin, "--verifier", vkey, "--witness-policy", otherPolicy); code == 0 || !strings.Contains(msg, "no valid cosignature") {
		t.Fatalf("log checkpoint with another witness's policy = %d %q; want a refusal", code, msg)
	}

	// The witness goes down: new writes are in the newest checkpoint, not
	// in the current one.
	w.stop()
	m := s.write(t, token, 2, "second") + 1
	waitFor(t, "the newest checkpoint", func() bool {
		_, cp := getWith(t, "", s.url+s.logPath+"/latest-checkpoint")
		return sizeOf(cp) == fmt.Sprint(m)
	}, s.stderr)
	if _, cp := getWith(t, "", s.url+s.logPath+"/checkpoint"); cp != current {
		t.Fatalf("the current checkpoint moved while its witness was down:\n%s\nwant\n%s", cp, current)
	}
	w.start()
	waitFor(t, "the current checkpoint to catch up", func() bool {
		_, cp := getWith(t, "", s.url+s.logPath+"/checkpoint")
		return sizeOf(cp) == fmt.Sprint(m) && strings.Contains(cp, "\n— example.com/witness ")
	}, s.stderr)
	s.stop()

	if out, errOut, err := verifyOut(t, append([]string{"--witness-policy", policy}, store...)...); err != nil || !strings.HasPrefix(out, "ok: ") {
		t.Fatalf("verify --witness-policy = %v, %q, %q", err, out, errOut)
	}
	if _, _, err := verifyOut(t, append([]string{"--witness-policy", otherPolicy}, store...)...); err == nil || !strings.Contains(err.Error(), "does not meet the witness policy") {
		t.Fatalf("verify with a policy of a witness that never cosigned = %v; want the published checkpoint refused", err)
	}
}

// must is the stdout of a cli call that must succeed.
func must(code int, out, msg string) string {
	if code != 0 {
		panic(msg)
	}
	return out
}
