package mcpserver_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/custody-mem/custody/mcpserver"
)

// TestArgumentErrorsArePlain: arguments that break a tool's input schema
// fail with a sentence that names the argument and the rule, never the
// schema validator's text; the same arguments within the rules work.
func TestArgumentErrorsArePlain(t *testing.T) {
	a := newAcme(t)
	cl := a.connect(t, a.harness)
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{mcpserver.ToolSearch, map[string]any{"query": "x", "limit": 500}, "invalid input: limit must be at most 100 (got 500)"},
		{mcpserver.ToolSearch, map[string]any{"query": "x", "limit": 0}, "invalid input: limit must be at least 1 (got 0)"},
		{mcpserver.ToolSearch, map[string]any{"query": "x", "limit": "ten"}, "invalid input: limit must be a whole number, not a string"},
		{mcpserver.ToolSearch, map[string]any{"query": "x", "limit": 2.5}, "limit must be a whole number, not the number 2.5"},
		{mcpserver.ToolSearch, map[string]any{"limit": 5}, "invalid input: query is required: plain text"},
		{mcpserver.ToolSearch, map[string]any{"query": 7}, "query must be a string, not the number 7"},
		{mcpserver.ToolRemember, map[string]any{"namespace": "prefs", "class": "rumour", "body": "x"}, `class must be one of preference, fact, episode, procedure, not "rumour"`},
		{mcpserver.ToolRemember, map[string]any{"namespace": "prefs", "class": "fact", "body": ""}, "body must not be empty"},
		{mcpserver.ToolGet, map[string]any{}, "invalid input: id is required"},
		{mcpserver.ToolGate, map[string]any{"action": "send_money", "args": map[string]any{}, "justification": []any{1}}, "justification[0] must be a string, not the number 1"},
		{mcpserver.ToolGate, map[string]any{"action": "send_money", "args": "x"}, "args must be an object"},
	} {
		got := cl.fails(tc.tool, tc.args)
		if !strings.Contains(got, tc.want) || strings.Contains(got, "validating") {
			t.Errorf("%s(%v) = %q, want %q and no validator text", tc.tool, tc.args, got, tc.want)
		}
	}
	ok[mcpserver.SearchOutput](cl, mcpserver.ToolSearch, map[string]any{"query": "x", "limit": 100})
	ok[mcpserver.SearchOutput](cl, mcpserver.ToolSearch, map[string]any{"query": "x", "limit": 1})
	ok[mcpserver.RememberOutput](cl, mcpserver.ToolRemember, map[string]any{"namespace": "notes", "class": "episode", "body": "met the plumber"})
}

// TestSessionErrorsAreJSON: a request on another principal's MCP session,
// or on a session that does not exist, answers the JSON error body of the
// rest of the HTTP API; the owner's own request on it is served.
func TestSessionErrorsAreJSON(t *testing.T) {
	f := newFixture(t, mcpserver.Options{})
	_, alice := f.principal(t, "acme", "alice", []string{"user"}, nil)
	_, bob := f.principal(t, "acme", "bob", []string{"user"}, nil)
	ts := httptest.NewServer(mcpserver.HTTPHandler(f.svc, mcpserver.Options{}))
	t.Cleanup(ts.Close)
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`

	sid := rawSession(t, ts.URL, alice, nil)
	resp, body := rawPost(t, ts.URL, bob, sid, nil, list)
	wantJSONError(t, resp, body, http.StatusForbidden, "forbidden")
	if !strings.Contains(body, "initialize") {
		t.Errorf("the mismatch does not say what to do: %s", body)
	}
	resp, body = rawPost(t, ts.URL, alice, "no-such-session", nil, list)
	wantJSONError(t, resp, body, http.StatusNotFound, "not_found")
	if resp, body := rawPost(t, ts.URL, alice, sid, nil, list); resp.StatusCode != http.StatusOK || !strings.Contains(body, "memory_search") {
		t.Errorf("alice's own session: %d %s", resp.StatusCode, body)
	}
}

// TestHTTPTextIsWhatWasSent: a tools/call over streamable HTTP whose
// arguments hold a lone surrogate escape or bytes that are not UTF-8 is
// 400 invalid_input naming the argument, and nothing is logged; an escaped
// surrogate pair (an emoji) is remembered exactly.
func TestHTTPTextIsWhatWasSent(t *testing.T) {
	f := newFixture(t, mcpserver.Options{})
	ap, _ := f.principal(t, "acme", "alice", []string{"user"}, nil)
	_, harness := f.principal(t, "acme", "harness", []string{"agent"}, nil)
	ts := httptest.NewServer(mcpserver.HTTPHandler(f.svc, mcpserver.Options{}))
	t.Cleanup(ts.Close)
	asAlice := map[string]string{mcpserver.SubjectHeader: "alice"}
	sid := rawSession(t, ts.URL, harness, asAlice)
	call := func(body string) string {
		return `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"memory_remember","arguments":` +
			`{"namespace":"notes","class":"episode","body":"` + body + `"}}}`
	}
	before := f.logSize(t)
	for _, body := range []string{`pay \ud800 now`, "caf\xe9"} {
		resp, answer := rawPost(t, ts.URL, harness, sid, asAlice, call(body))
		wantJSONError(t, resp, answer, http.StatusBadRequest, "invalid_input")
		if !strings.Contains(answer, `"field":"params.arguments.body"`) {
			t.Errorf("the error does not name the argument: %s", answer)
		}
	}
	if after := f.logSize(t); after != before {
		t.Fatalf("log grew %d -> %d on text that is not UTF-8", before, after)
	}

	resp, answer := rawPost(t, ts.URL, harness, sid, asAlice, call(`smile \ud83d\ude00`))
	m := regexp.MustCompile(`\\"id\\":\\"([0-9A-Z]{26})\\"|"id":"([0-9A-Z]{26})"`).FindStringSubmatch(answer)
	if resp.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("an emoji: %d %s", resp.StatusCode, answer)
	}
	id := m[1] + m[2]
	r, err := f.svc.Get(f.ctx, f.act(t, ap, ""), id)
	if err != nil || r.Body != "smile \U0001F600" {
		t.Fatalf("stored body %q, %v; want the emoji as sent", r.Body, err)
	}
}

// TestToolTextIsWhatWasSent: on any transport (here the SDK's in-memory
// one, which carries the JSON as bytes, as stdio does) a tool argument
// holding a lone surrogate fails naming the argument and writes nothing;
// an escaped surrogate pair and a U+FFFD the client did send are stored
// exactly.
func TestToolTextIsWhatWasSent(t *testing.T) {
	a := newAcme(t)
	cl := a.connect(t, a.harness)
	before := a.logSize(t)
	got := cl.fails(mcpserver.ToolRemember, json.RawMessage(`{"namespace":"notes","class":"episode","body":"pay \ud800 now"}`))
	if !strings.Contains(got, "body") || !strings.Contains(got, "surrogate") {
		t.Errorf("lone surrogate: %q; want the argument and the fault named", got)
	}
	if after := a.logSize(t); after != before {
		t.Errorf("the refused call wrote %d log entries", after-before)
	}
	out, _ := ok[mcpserver.RememberOutput](cl, mcpserver.ToolRemember, json.RawMessage(`{"namespace":"notes","class":"episode","body":"tea \ud83c\udf75 and \ufffd"}`))
	rec, _ := ok[map[string]any](cl, mcpserver.ToolGet, map[string]any{"id": out.ID})
	if body, _ := rec["body"].(string); body != "tea \U0001F375 and \uFFFD" {
		t.Errorf("stored body %q; want the tea emoji and the U+FFFD as sent", rec["body"])
	}
}
