package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/mcpserver"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/tlog"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var update = flag.Bool("update", false, "rewrite the golden transcripts under testdata/")

// fixture is a service over a real SQLite file with a fixed clock.
type fixture struct {
	t   *testing.T
	ctx context.Context
	svc *custody.Service
	srv *mcpserver.Server
}

var testNow = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

func newFixture(t testing.TB, opts mcpserver.Options) *fixture {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "custody.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	key, _, err := tlog.LoadOrCreateServerKey(filepath.Join(dir, "server.key"))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := custody.New(st, key, custody.Options{Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	tt, _ := t.(*testing.T)
	return &fixture{t: tt, ctx: ctx, svc: svc, srv: mcpserver.New(svc, opts)}
}

// principal adds a principal and returns it with its token.
func (f *fixture) principal(tb testing.TB, tenant, name string, roles, channels []string) (*custody.Principal, string) {
	tb.Helper()
	p, token, err := f.svc.AddPrincipal(f.ctx, custody.PrincipalInput{Tenant: tenant, Name: name, Roles: roles, Channels: channels})
	if err != nil {
		tb.Fatalf("add principal %s/%s: %v", tenant, name, err)
	}
	return p, token
}

func (f *fixture) act(tb testing.TB, p *custody.Principal, subject string) *custody.Caller {
	tb.Helper()
	c, err := f.svc.Act(f.ctx, p, subject)
	if err != nil {
		tb.Fatalf("act %s for %q: %v", p.ID(), subject, err)
	}
	return c
}

// logSize is the length of the signed log: it grows with every decision.
func (f *fixture) logSize(tb testing.TB) uint64 {
	tb.Helper()
	n, err := f.svc.Store().LogSize(f.ctx, "acme")
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// client is one MCP session seen from the model's side.
type client struct {
	tb      testing.TB
	ctx     context.Context
	cs      *mcp.ClientSession
	ss      *mcp.ServerSession
	session string // the custody session id
	log     *syncBuffer
}

var sessionRE = regexp.MustCompile(`custody session: (\S+)`)

// sessionOf reads the custody session id from the server's instructions.
func sessionOf(tb testing.TB, cs *mcp.ClientSession) string {
	tb.Helper()
	m := sessionRE.FindStringSubmatch(cs.InitializeResult().Instructions)
	if m == nil {
		tb.Fatalf("instructions name no custody session: %q", cs.InitializeResult().Instructions)
	}
	return m[1]
}

// connect opens an MCP session for c over in-memory transports, recording
// the server's side of the conversation.
func (f *fixture) connect(tb testing.TB, c *custody.Caller) *client {
	tb.Helper()
	srv, sess, err := f.srv.Open(f.ctx, mcpserver.Local(f.svc, c))
	if err != nil {
		tb.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	log := &syncBuffer{}
	ss, err := srv.Connect(f.ctx, &mcp.LoggingTransport{Transport: st, Writer: log}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-harness", Version: "1"}, nil).Connect(f.ctx, ct, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cs.Close(); ss.Wait() })
	cl := &client{tb: tb, ctx: f.ctx, cs: cs, ss: ss, session: sessionOf(tb, cs), log: log}
	if cl.session != sess.ID {
		tb.Fatalf("instructions name session %s, opened %s", cl.session, sess.ID)
	}
	return cl
}

// call calls a tool; a protocol error fails the test, a tool error does not.
func (cl *client) call(name string, args any) *mcp.CallToolResult {
	cl.tb.Helper()
	res, err := cl.cs.CallTool(cl.ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		cl.tb.Fatalf("%s: %v", name, err)
	}
	if got := res.Meta[mcpserver.SessionMetaKey]; !res.IsError && got != cl.session {
		cl.tb.Errorf("%s: _meta %s = %v, want %s", name, mcpserver.SessionMetaKey, got, cl.session)
	}
	return res
}

// ok calls a tool that must succeed and decodes its structured result.
func ok[T any](cl *client, name string, args any) (T, string) {
	cl.tb.Helper()
	var out T
	res := cl.call(name, args)
	if res.IsError {
		cl.tb.Fatalf("%s(%v): tool error %q", name, args, text(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		cl.tb.Fatal(err)
	}
	if err := json.Unmarshal(b, &out); err != nil {
		cl.tb.Fatalf("%s: structured content %s: %v", name, b, err)
	}
	return out, text(res)
}

// fails calls a tool that must fail and returns the error text.
func (cl *client) fails(name string, args any) string {
	cl.tb.Helper()
	res := cl.call(name, args)
	if !res.IsError {
		cl.tb.Fatalf("%s(%v) succeeded, want a tool error: %s", name, args, text(res))
	}
	return text(res)
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// transcript ends the session and returns the JSON-RPC messages of the
// given methods, request then response, with ids, times, log indexes and
// scores replaced by placeholders.
func (cl *client) transcript(methods ...string) string {
	cl.tb.Helper()
	cl.cs.Close()
	cl.ss.Wait()
	type msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	var order []string
	reqs, resps := map[string]string{}, map[string]string{}
	for _, line := range strings.Split(cl.log.String(), "\n") {
		dir, data, found := strings.Cut(line, ": ")
		if !found || (dir != "read" && dir != "write") {
			continue
		}
		var m msg
		if err := json.Unmarshal([]byte(data), &m); err != nil || m.ID == nil {
			continue
		}
		id := string(m.ID)
		switch {
		case dir == "read" && m.Method != "":
			for _, want := range methods {
				if m.Method == want {
					reqs[id] = data
					order = append(order, id)
				}
			}
		case dir == "write" && m.Method == "":
			resps[id] = data
		}
	}
	var b strings.Builder
	for _, id := range order {
		b.WriteString("-> " + indent(cl.tb, reqs[id]) + "\n")
		b.WriteString("<- " + indent(cl.tb, resps[id]) + "\n\n")
	}
	return placeholders(b.String())
}

func indent(tb testing.TB, s string) string {
	var out bytes.Buffer
	if err := json.Indent(&out, []byte(s), "   ", "  "); err != nil {
		tb.Fatalf("indent %q: %v", s, err)
	}
	return out.String()
}

var (
	ulidRE   = regexp.MustCompile(`\b[0-9A-HJKMNP-TV-Z]{26}\b`)
	timeRE   = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)
	logRE    = regexp.MustCompile(`("log_index": |log=)\d+`)
	scoreRE  = regexp.MustCompile(`("score": |score=)-?\d+(\.\d+)?(e-?\d+)?`)
	policyRE = regexp.MustCompile(`\b[0-9a-f]{64}\b`)
)

// placeholders makes a transcript stable: ids are numbered in order of
// first appearance, so a transcript still shows which id is which.
func placeholders(s string) string {
	ids := map[string]string{}
	s = ulidRE.ReplaceAllStringFunc(s, func(id string) string {
		if _, ok := ids[id]; !ok {
			ids[id] = "<id" + strconv.Itoa(len(ids)+1) + ">"
		}
		return ids[id]
	})
	s = timeRE.ReplaceAllString(s, "<time>")
	s = logRE.ReplaceAllString(s, "${1}<log>")
	s = scoreRE.ReplaceAllString(s, "${1}<score>")
	return policyRE.ReplaceAllString(s, "<sha256>")
}

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./mcpserver -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("transcript %s differs from the golden file (run go test ./mcpserver -update if the change is intended):\n%s", path, diff(string(want), got))
	}
}

// diff shows the first differing line with some context.
func diff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + strconv.Itoa(i+1) + ":\n  want: " + w + "\n  got:  " + g
		}
	}
	return "(no line differs)"
}

// syncBuffer is a bytes.Buffer safe for the transport's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// bearerTransport adds a bearer token and headers to every request.
type bearerTransport struct {
	token   string
	headers map[string]string
}

func (b *bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	for k, v := range b.headers {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}
