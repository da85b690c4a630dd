package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkServeMemory measures the resident memory of the real custody
// binary serving a single user's store: it builds the binary, starts
// `custody serve` on a new SQLite store (the default embedder, glove),
// writes CUSTODY_BENCH_RECORDS records (default 10,000) over HTTP from 8
// clients — each a sentence or two of this repository's docs, so the
// words are English — then runs 400 hybrid searches, and reports the
// server's VmRSS (resident now), VmHWM (the peak), RssAnon and RssFile
// from /proc, in MB. CUSTODY_BENCH_SERVE_ARGS adds flags to serve (e.g.
// "--embedder builtin" or "--embedder none"); CUSTODY_BENCH_VERBOSE=1
// keeps the server's /proc/PID/smaps in $TMPDIR/custody-serve.smaps.
// Linux only.
// Run:
//
//	go test ./cmd/custody -run '^$' -bench ServeMemory -benchtime 1x
func BenchmarkServeMemory(b *testing.B) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		b.Skip("needs /proc (Linux)")
	}
	n := 10000
	if v := os.Getenv("CUSTODY_BENCH_RECORDS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatalf("CUSTODY_BENCH_RECORDS=%q: %v", v, err)
		}
	}
	dir := b.TempDir()
	bin := filepath.Join(dir, "custody")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	sentences := docSentences(b)
	sum := map[string]float64{}
	for i := range b.N {
		for k, v := range serveMemory(b, bin, filepath.Join(dir, fmt.Sprintf("run%d", i)), n, sentences) {
			sum[k] += v
		}
	}
	for _, f := range memoryFields {
		b.ReportMetric(sum[f]/float64(b.N), memoryUnits[f])
	}
	b.ReportMetric(float64(n), "records")
}

// memoryFields are the figures of /proc/PID/status reported: resident
// memory now, its peak, and its anonymous (heaps: Go's and SQLite's) and
// file-backed (the binary's text, the database's map) parts.
var (
	memoryFields = []string{"VmRSS", "VmHWM", "RssAnon", "RssFile"}
	memoryUnits  = map[string]string{"VmRSS": "rss-MB", "VmHWM": "hwm-MB", "RssAnon": "anon-MB", "RssFile": "file-MB"}
)

func serveMemory(b *testing.B, bin, dir string, n int, sentences []string) map[string]float64 {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	db := filepath.Join(dir, "custody.db")
	out, err := exec.Command(bin, "principal", "add", "--db", db, "--tenant", "acme", "--name", "alice", "--role", "user").Output()
	if err != nil {
		b.Fatalf("principal add: %v", err)
	}
	token := strings.TrimSpace(string(out))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	args := append([]string{"serve", "--db", db, "--addr", addr, "--rate-limit", "0"}, strings.Fields(os.Getenv("CUSTODY_BENCH_SERVE_ARGS"))...)
	cmd := exec.Command(bin, args...)
	var logs bytes.Buffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}()
	url := "http://" + addr
	for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get(url + "/healthz"); err == nil {
			resp.Body.Close()
			break
		}
		if time.Since(start) > time.Minute {
			b.Fatalf("serve did not answer within a minute:\n%s", logs.String())
		}
	}
	writeAndSearch(b, url, token, n, sentences)
	figures := map[string]float64{}
	for _, f := range memoryFields {
		figures[f] = procStatus(b, cmd.Process.Pid, f)
	}
	if os.Getenv("CUSTODY_BENCH_VERBOSE") != "" {
		printGoMemory(b, url, token)
		if data, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", cmd.Process.Pid)); err == nil {
			os.WriteFile(filepath.Join(os.TempDir(), "custody-serve.smaps"), data, 0o600)
			b.Logf("the server's mappings: %s", filepath.Join(os.TempDir(), "custody-serve.smaps"))
		}
	}
	return figures
}

// writeAndSearch writes n records to the server at url as the bearer of
// token, from 8 clients, each a sentence or two of sentences, then runs
// 400 hybrid searches.
func writeAndSearch(b *testing.B, url, token string, n int, sentences []string) {
	post := func(path string, body any) (*http.Response, error) {
		data, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, url+path, bytes.NewReader(data))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		return http.DefaultClient.Do(req)
	}
	var wg sync.WaitGroup
	const clients = 8
	for c := range clients {
		wg.Go(func() {
			for i := c; i < n; i += clients {
				body := sentences[i%len(sentences)]
				if i%3 == 0 {
					body += " " + sentences[(i*7+1)%len(sentences)]
				}
				resp, err := post("/v1/memories", map[string]any{"namespace": "notes", "class": "fact", "channel": "user", "body": fmt.Sprintf("%s (note %d)", body, i)})
				if err != nil {
					b.Error(err)
					return
				}
				resp.Body.Close()
				if resp.StatusCode/100 != 2 {
					b.Errorf("write %d: %s", i, resp.Status)
					return
				}
			}
		})
	}
	wg.Wait()
	for i := range 400 {
		words := strings.Fields(sentences[(i*13)%len(sentences)])
		q := strings.Join(words[:min(4, len(words))], " ")
		resp, err := post("/v1/search", map[string]any{"query": q, "mode": "hybrid"})
		if err != nil {
			b.Fatal(err)
		}
		var sr struct{ Mode, Fallback string }
		json.NewDecoder(resp.Body).Decode(&sr)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || sr.Mode != "hybrid" && os.Getenv("CUSTODY_BENCH_SERVE_ARGS") == "" {
			b.Fatalf("search %q: %s, mode %q %s", q, resp.Status, sr.Mode, sr.Fallback)
		}
	}
}

// procStatus is a memory figure of /proc/PID/status, in MB.
func procStatus(b *testing.B, pid int, field string) float64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				b.Fatal(err)
			}
			return float64(kb) / 1000
		}
	}
	b.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// docSentences are the sentences of the repository's docs: English text
// to write.
func docSentences(b *testing.B) []string {
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(files) == 0 {
		b.Fatalf("no docs to write from: %v", err)
	}
	split := regexp.MustCompile(`[.!?]\s+`)
	var out []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		for _, s := range split.Split(string(data), -1) {
			s = strings.Join(strings.Fields(s), " ")
			if len(s) > 40 && len(s) < 400 {
				out = append(out, s)
			}
		}
	}
	return out
}

// printGoMemory logs the Go runtime's memory figures the server's
// /metrics reports (go_memstats_*), in MB.
func printGoMemory(b *testing.B, url, token string) {
	req, _ := http.NewRequest(http.MethodGet, url+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Logf("metrics: %v", err)
		return
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(data), "\n") {
		name, value, ok := strings.Cut(line, " ")
		if !ok || !strings.HasPrefix(name, "go_memstats_") || !strings.HasSuffix(name, "_bytes") {
			continue
		}
		if v, err := strconv.ParseFloat(value, 64); err == nil {
			fmt.Fprintf(os.Stderr, "%-40s %8.1f MB\n", name, v/1e6)
		}
	}
}
