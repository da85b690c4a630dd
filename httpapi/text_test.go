package httpapi

import (
	"net/http"
	"testing"
)

// TestTextIsWhatWasSent: a body with bytes that are not UTF-8, or with a
// lone surrogate escape, is 400 invalid_input naming the field and nothing
// is written; an escaped surrogate pair (an emoji) and a U+FFFD the client
// really sent are stored exactly.
func TestTextIsWhatWasSent(t *testing.T) {
	e := newEnv(t, Options{})
	alice := e.principal("acme", "alice", []string{"user"})
	wrap := func(body string) string {
		return `{"namespace":"n","class":"fact","channel":"user","body":"` + body + `"}`
	}
	bad := []struct {
		name, req, field string
	}{
		{"invalid utf-8", wrap("caf\xe9 au lait"), "body"},
		{"truncated utf-8", wrap("ok \xe2\x82"), "body"},
		{"utf-8 encoded surrogate", wrap("x \xed\xa0\x80 y"), "body"},
		{"lone high surrogate", wrap(`pay \ud800 now`), "body"},
		{"lone low surrogate", wrap(`\udc00`), "body"},
		{"high surrogate then text", wrap(`\ud83dx\ude00`), "body"},
		{"reversed pair", wrap(`\ude00\ud83d`), "body"},
		{"in the namespace", `{"namespace":"n\ud800","class":"fact","channel":"user","body":"x"}`, "namespace"},
		{"in a nested field", `{"namespace":"n","class":"fact","channel":"user","body":"x","derived_from":[{"id":"\udfff","weight":1}]}`, "derived_from.id"},
		{"in a search query", `{"query":"\ud800"}`, "query"},
	}
	before := e.count("acme")
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			path := "/v1/memories"
			if tc.field == "query" {
				path = "/v1/search"
			}
			r := e.do(alice, "POST", path, tc.req)
			want(t, r, http.StatusBadRequest, "invalid_input")
			if got := r.json(t)["error"].(map[string]any)["field"]; got != tc.field {
				t.Fatalf("field = %v, want %q: %s", got, tc.field, r.body)
			}
		})
	}
	if after := e.count("acme"); after != before {
		t.Fatalf("records %d -> %d after text that is not UTF-8", before, after)
	}

	good := []struct {
		name, sent, stored string
	}{
		{"escaped surrogate pair", `smile \ud83d\ude00`, "smile \U0001F600"},
		{"raw emoji", "smile \U0001F600", "smile \U0001F600"},
		{"raw replacement character", "broken \uFFFD glyph", "broken \uFFFD glyph"},
		{"escaped replacement character", `broken \ufffd glyph`, "broken \uFFFD glyph"},
		{"escaped backslash before u", `path C:\\ud800`, `path C:\ud800`},
	}
	for _, tc := range good {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(alice, "POST", "/v1/memories", wrap(tc.sent))
			want(t, r, http.StatusCreated, "")
			got := e.do(alice, "GET", "/v1/memories/"+r.json(t)["id"].(string), nil)
			want(t, got, http.StatusOK, "")
			if body := got.json(t)["body"]; body != tc.stored {
				t.Fatalf("stored body %q, want %q", body, tc.stored)
			}
		})
	}
}
