package httpapi

import (
	"net/http"
	"strings"
	"testing"
)

// TestOneLimitRule: a limit above a route's maximum is refused with the
// bound, as MCP refuses it, never quietly cut; the maximum itself and no
// limit are answered.
func TestOneLimitRule(t *testing.T) {
	e := newEnv(t, Options{})
	alice := e.principal("acme", "alice", []string{"user"}, "user")
	want(t, e.do(alice, "POST", "/v1/memories", MemoryRequest{Namespace: "n", Class: "fact", Body: "ledger", Channel: "user"}), http.StatusCreated, "")
	for _, c := range []struct {
		method, path string
		body         any
		status       int
	}{
		{"POST", "/v1/search", SearchRequest{Query: "ledger", Limit: 101}, http.StatusBadRequest},
		{"POST", "/v1/search", SearchRequest{Query: "ledger", Limit: 100}, http.StatusOK},
		{"POST", "/v1/search", SearchRequest{Query: "ledger"}, http.StatusOK},
		{"GET", "/v1/memories?limit=501", nil, http.StatusBadRequest},
		{"GET", "/v1/memories?limit=500", nil, http.StatusOK},
		{"GET", "/v1/namespaces?limit=1001", nil, http.StatusBadRequest},
		{"GET", "/v1/namespaces?limit=1000", nil, http.StatusOK},
	} {
		r := e.do(alice, c.method, c.path, c.body)
		if r.status != c.status {
			t.Errorf("%s %s %v = %d %s, want %d", c.method, c.path, c.body, r.status, r.body, c.status)
		}
		if c.status == http.StatusBadRequest && (r.errCode() != "invalid_input" || !strings.Contains(r.String(), "limit must be at most")) {
			t.Errorf("%s %s: %s, want invalid_input saying the bound", c.method, c.path, r.body)
		}
	}
	if r := e.do(alice, "POST", "/v1/search", SearchRequest{Query: "ledger", Limit: 500}); !strings.Contains(r.String(), "limit must be at most 100 (got 500)") {
		t.Errorf("search limit 500: %s, want MCP's words: limit must be at most 100 (got 500)", r.body)
	}
}
