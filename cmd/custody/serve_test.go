package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// startServe runs custody serve on a fresh database with args, on a free
// port, and returns its URL and the token of acme/alice, a user. The
// server stops with the test.
func startServe(t *testing.T, args ...string) (url, token string) {
	t.Helper()
	db := filepath.Join(t.TempDir(), "c.db")
	token = strings.TrimSpace(mustRun(t, "", runPrincipal, "add", "--db", db, "--tenant", "acme", "--name", "alice", "--role", "user"))
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := runServe(ctx, append([]string{"--db", db, "--addr", "127.0.0.1:0"}, args...), io.Discard, pw)
		pw.Close()
		done <- err
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "custody is serving on "); ok {
			url, _, _ = strings.Cut(u, " ")
			break
		}
	}
	if url == "" {
		t.Fatalf("serve stopped before serving: %v", <-done)
	}
	go io.Copy(io.Discard, pr) // the request log
	return url, token
}

// get sends GET /v1/memories as token and returns the status and Retry-After.
func get(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url+"/v1/memories", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, res.Header.Get("Retry-After")
}

// --rate-limit and --rate-burst shape each principal's bucket: the request
// after the burst is 429 with Retry-After; a batch is one request.
func TestServeRateLimit(t *testing.T) {
	url, token := startServe(t, "--rate-limit", "0.01", "--rate-burst", "3")
	t.Setenv("CUSTODY_URL", url)
	out := mustRun(t, token, runImport, "--in", writeJSONL(t, 5))
	if !strings.Contains(out, "5 admitted") {
		t.Fatalf("import printed %q", out)
	}
	for i := range 2 {
		if code, _ := get(t, url, token); code != http.StatusOK {
			t.Fatalf("request %d of the burst of 3 (after a batch): %d", i+2, code)
		}
	}
	code, retry := get(t, url, token)
	if n, err := strconv.Atoi(retry); code != http.StatusTooManyRequests || err != nil || n < 1 {
		t.Fatalf("the request after the burst: %d with Retry-After %q; want 429 with a number of seconds", code, retry)
	}
}

// The default limit serves a client's ordinary pace, and --rate-limit 0
// turns the limit off.
func TestServeRateDefaults(t *testing.T) {
	for _, args := range [][]string{nil, {"--rate-limit", "0", "--rate-burst", "1"}} {
		url, token := startServe(t, args...)
		for i := range 50 {
			if code, _ := get(t, url, token); code != http.StatusOK {
				t.Fatalf("serve %v: request %d answered %d", args, i, code)
			}
		}
	}
}

func TestServeRateFlagsChecked(t *testing.T) {
	for _, args := range [][]string{{"--rate-limit", "-1"}, {"--rate-burst", "0"}} {
		_, _, err := run(t, "", runServe, append([]string{"--db", filepath.Join(t.TempDir(), "c.db")}, args...)...)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("serve %v: %v; want a usage error", args, err)
		}
	}
}

// serve ranks searches with the search index's copy in memory, and with
// FTS5 alone under --search-memory 0; both find the record. A negative
// bound is refused.
func TestServeSearchMemory(t *testing.T) {
	for _, tc := range []struct {
		args []string
		by   string // the ranking the search is counted under
	}{{nil, "memory"}, {[]string{"--search-memory", "0"}, "fts5"}} {
		url, token := startServe(t, tc.args...)
		do := func(method, path, body string) string {
			req, err := http.NewRequest(method, url+path, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+token)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			if res.StatusCode >= 300 {
				t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, b)
			}
			return string(b)
		}
		do("POST", "/v1/memories", `{"namespace":"n","class":"fact","body":"the plumber's invoice","channel":"user"}`)
		if got := do("POST", "/v1/search", `{"query":"plumber"}`); !strings.Contains(got, "plumber's invoice") {
			t.Fatalf("serve %v: the search found nothing: %s", tc.args, got)
		}
		// A search is one ranking or more (its lexical list, the semantic
		// list's candidates, the feedback list): all of them by one.
		metrics := do("GET", "/metrics", "")
		for _, by := range []string{"memory", "fts5"} {
			v := regexp.MustCompile(`(?m)^custody_sqlite_searches_ranked_total\{by="` + by + `"\} (\d+)$`).FindStringSubmatch(metrics)
			if v == nil || (v[1] == "0") == (by == tc.by) {
				t.Errorf("serve %v: rankings by %s: %v; want them all by %s", tc.args, by, v, tc.by)
			}
		}
	}
	_, _, err := run(t, "", runServe, "--db", filepath.Join(t.TempDir(), "c.db"), "--search-memory", "-1")
	var ue usageError
	if !errors.As(err, &ue) {
		t.Errorf("serve --search-memory -1: %v; want a usage error", err)
	}
}
