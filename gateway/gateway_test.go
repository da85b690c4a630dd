package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/custody-mem/custody/gateway"
	"github.com/custody-mem/custody/internal/bankmcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMain lets this test binary be the stdio upstream of its own tests.
func TestMain(m *testing.M) {
	bankmcp.Main()
	os.Exit(m.Run())
}

// stdio is an upstream that runs this test binary as the bank (or another
// mode), recording its calls in a file.
func stdio(t *testing.T, name, mode string) (gateway.Upstream, string) {
	t.Helper()
	rec := filepath.Join(t.TempDir(), "calls.jsonl")
	return gateway.Upstream{Name: name, Channel: "tool:api", Command: []string{os.Args[0]},
		Env: map[string]string{bankmcp.ModeEnv: mode, bankmcp.RecordEnv: rec}}, rec
}

func start(t *testing.T, cfg *gateway.Config, opts gateway.Options) *gateway.Gateway {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.Stderr == nil {
		opts.Stderr = io.Discard
	}
	g, err := gateway.Start(context.Background(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

func call(t *testing.T, g *gateway.Gateway, name, args string) (*mcp.CallToolResult, error) {
	t.Helper()
	return g.Call(context.Background(), name, json.RawMessage(args))
}

func TestStdioUpstreamListsPrefixedToolsWithSchemas(t *testing.T) {
	u, _ := stdio(t, "bank", "bank")
	u.Actions = map[string]string{"send_money": "send_money"}
	g := start(t, &gateway.Config{Upstreams: []gateway.Upstream{u}}, gateway.Options{})
	var names []string
	for _, tl := range g.Tools() {
		names = append(names, tl.Name)
	}
	if got, want := strings.Join(names, " "), "bank_crash bank_get_transactions bank_hang bank_huge bank_send_money"; got != want {
		t.Fatalf("tools = %s, want %s", got, want)
	}
	send, _ := g.Tool("bank_send_money")
	if got, want := send.Action, "send_money"; got != want {
		t.Errorf("mapped action = %q, want %q", got, want)
	}
	tx, _ := g.Tool("bank_get_transactions")
	if got, want := tx.Action, "bank.get_transactions"; got != want {
		t.Errorf("default action = %q, want %q", got, want)
	}
	listed := send.Listed()
	if listed.Name != "bank_send_money" || listed.Description != "Send money to an IBAN." {
		t.Errorf("listed as %q %q", listed.Name, listed.Description)
	}
	b, _ := json.Marshal(listed.InputSchema)
	if !strings.Contains(string(b), `"recipient"`) || !strings.Contains(string(b), "the IBAN to pay") {
		t.Errorf("input schema not passed through: %s", b)
	}
}

func TestStdioUpstreamCrashIsReportedAndRestarted(t *testing.T) {
	u, rec := stdio(t, "bank", "bank")
	g := start(t, &gateway.Config{Upstreams: []gateway.Upstream{u}}, gateway.Options{})
	_, err := call(t, g, "bank_crash", `{}`)
	var ge *gateway.Error
	if !errors.As(err, &ge) || !strings.Contains(ge.Msg, "stopped during the call") {
		t.Fatalf("crash: %v, want an upstream error saying it stopped", err)
	}
	// The next call starts the bank again and is answered.
	res, err := call(t, g, "bank_send_money", `{"recipient":"`+bankmcp.UserAccount+`","amount":5}`)
	if err != nil {
		t.Fatalf("the call after the crash: %v", err)
	}
	if !strings.Contains(gateway.Text(res), "sent 5.00 EUR") {
		t.Errorf("result after restart: %q", gateway.Text(res))
	}
	calls, err := bankmcp.ReadCalls(rec, "send_money")
	if err != nil || len(calls) != 1 {
		t.Fatalf("bank received %d send_money calls (%v), want 1", len(calls), err)
	}
}

func TestStdioUpstreamThatWillNotStartIsReportedAtStart(t *testing.T) {
	u := gateway.Upstream{Name: "gone", Channel: "tool:api", Command: []string{filepath.Join(t.TempDir(), "no-such-server")}}
	_, err := gateway.Start(context.Background(), &gateway.Config{Upstreams: []gateway.Upstream{u}}, gateway.Options{Stderr: io.Discard})
	if err == nil || !strings.Contains(err.Error(), `upstream "gone"`) {
		t.Fatalf("Start: %v, want an error naming the upstream", err)
	}
}

func TestHangingUpstreamTimesOut(t *testing.T) {
	u, _ := stdio(t, "bank", "bank")
	u.Timeout = gateway.Duration(time.Second) // the hang never answers
	g := start(t, &gateway.Config{Upstreams: []gateway.Upstream{u}}, gateway.Options{})
	_, err := call(t, g, "bank_hang", `{}`)
	var ge *gateway.Error
	if !errors.As(err, &ge) || !strings.Contains(ge.Msg, "did not answer hang within 1s") {
		t.Fatalf("hang: %v, want a timeout error", err)
	}
	// The upstream still serves other calls.
	if _, err := call(t, g, "bank_get_transactions", `{}`); err != nil {
		t.Fatalf("the call after the timeout: %v", err)
	}
}

func TestHugeResultIsBounded(t *testing.T) {
	u, _ := stdio(t, "bank", "bank")
	g := start(t, &gateway.Config{Upstreams: []gateway.Upstream{u}, MaxResultBytes: 1000}, gateway.Options{})
	_, err := call(t, g, "bank_huge", `{"bytes": 5000}`)
	var ge *gateway.Error
	if !errors.As(err, &ge) || !strings.Contains(ge.Msg, "more than the gateway's limit of 1000 bytes") {
		t.Fatalf("huge: %v, want a bound error", err)
	}
	// The twin: a result under the bound comes back whole.
	res, err := call(t, g, "bank_huge", `{"bytes": 500}`)
	if err != nil || len(gateway.Text(res)) != 500 {
		t.Fatalf("a result under the bound: %v", err)
	}
}

func TestMalformedResultIsAnError(t *testing.T) {
	u, _ := stdio(t, "odd", "malformed")
	g := start(t, &gateway.Config{Upstreams: []gateway.Upstream{u}}, gateway.Options{})
	// Tools an MCP server could not list are skipped, the others listed.
	var names []string
	for _, tl := range g.Tools() {
		names = append(names, tl.Name)
	}
	if got, want := strings.Join(names, " "), "odd_get_balance"; got != want {
		t.Errorf("tools = %q, want %q", got, want)
	}
	_, err := call(t, g, "odd_get_balance", `{}`)
	var ge *gateway.Error
	if !errors.As(err, &ge) || !strings.Contains(ge.Msg, "upstream odd") {
		t.Fatalf("malformed: %v, want an upstream error", err)
	}
}

func TestToolNamedLikeAReservedOneRefusesToStart(t *testing.T) {
	u, _ := stdio(t, "bank", "bank")
	_, err := gateway.Start(context.Background(), &gateway.Config{Upstreams: []gateway.Upstream{u}},
		gateway.Options{Stderr: io.Discard, Reserved: []string{"memory_search", "bank_send_money"}})
	if err == nil || !strings.Contains(err.Error(), "bank_send_money, the name of one of custody's own tools") {
		t.Fatalf("Start: %v, want the collision refused", err)
	}
}

// TestHTTPUpstreamGetsItsHeaders: a streamable HTTP upstream receives the
// configured headers on every request; without them it refuses.
func TestHTTPUpstreamGetsItsHeaders(t *testing.T) {
	rec := &bankmcp.Recorder{}
	bank := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return bankmcp.New(rec) }, nil)
	var mu sync.Mutex
	var seen []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		bank.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	u := gateway.Upstream{Name: "bank", Channel: "tool:api", URL: ts.URL, Headers: map[string]string{"Authorization": "Bearer s3cret"}}
	g := start(t, &gateway.Config{Upstreams: []gateway.Upstream{u}}, gateway.Options{})
	if _, err := call(t, g, "bank_send_money", `{"recipient":"x","amount":1}`); err != nil {
		t.Fatal(err)
	}
	if got := len(rec.Calls("send_money")); got != 1 {
		t.Fatalf("bank received %d calls, want 1", got)
	}
	mu.Lock()
	for _, h := range seen {
		if h != "Bearer s3cret" {
			t.Errorf("a request carried Authorization %q", h)
		}
	}
	mu.Unlock()
	// The twin: without the header the upstream cannot be started.
	u.Headers = nil
	if _, err := gateway.Start(context.Background(), &gateway.Config{Upstreams: []gateway.Upstream{u}}, gateway.Options{}); err == nil {
		t.Fatal("an upstream that refuses the gateway started")
	}
}

// TestHTTPUpstreamHugeAnswerIsBounded: an HTTP upstream's answer is read
// only up to a bound; over the result limit the error is plain, far over
// it the read stops. The gateway then serves the next call.
func TestHTTPUpstreamHugeAnswerIsBounded(t *testing.T) {
	rec := &bankmcp.Recorder{}
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return bankmcp.NewFaulty(rec) }, nil))
	t.Cleanup(ts.Close)
	u := gateway.Upstream{Name: "bank", Channel: "tool:api", URL: ts.URL}
	g := start(t, &gateway.Config{Upstreams: []gateway.Upstream{u}, MaxResultBytes: 1000}, gateway.Options{})
	for _, tc := range []struct {
		bytes int
		want  string
	}{
		{5000, "more than the gateway's limit of 1000 bytes"},
		{3 << 20, "more than the gateway reads"},
	} {
		_, err := call(t, g, "bank_huge", fmt.Sprintf(`{"bytes": %d}`, tc.bytes))
		var ge *gateway.Error
		if !errors.As(err, &ge) || !strings.Contains(ge.Msg, tc.want) {
			t.Errorf("huge %d: %v, want %q", tc.bytes, err, tc.want)
		}
		res, err := call(t, g, "bank_huge", `{"bytes": 100}`)
		if err != nil || len(gateway.Text(res)) != 100 {
			t.Fatalf("the call after a huge answer: %v", err)
		}
	}
}

// TestHTTPUpstreamThatRestartsIsReconnected: an HTTP upstream that forgot
// the session (it restarted) fails the call in flight with a plain error,
// and the next call opens a new session.
func TestHTTPUpstreamThatRestartsIsReconnected(t *testing.T) {
	rec := &bankmcp.Recorder{}
	var mu sync.Mutex
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return bankmcp.New(rec) }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		h := handler
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	u := gateway.Upstream{Name: "bank", Channel: "tool:api", URL: ts.URL}
	g := start(t, &gateway.Config{Upstreams: []gateway.Upstream{u}}, gateway.Options{})
	if _, err := call(t, g, "bank_get_transactions", `{}`); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return bankmcp.New(rec) }, nil) // a restart: no sessions
	mu.Unlock()
	_, err := call(t, g, "bank_get_transactions", `{}`)
	var ge *gateway.Error
	if !errors.As(err, &ge) || !strings.Contains(ge.Msg, "upstream bank") {
		t.Fatalf("the call on a forgotten session: %v", err)
	}
	if _, err := call(t, g, "bank_get_transactions", `{}`); err != nil {
		t.Fatalf("the call after reconnecting: %v", err)
	}
}
