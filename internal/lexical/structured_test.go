package lexical

import (
	"slices"
	"testing"
)

// A JSON object or array is searched by its values: keys, brackets,
// true, false and null are not terms; nested values are, in order; a
// text that only looks like JSON, and prose, are read as they are.
func TestValues(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"content": "Bob prefers short answers", "type": "preference", "tags": ["tone", 2], "meta": {"source": "chat", "ok": true, "n": null}}`,
			"Bob prefers short answers\npreference\ntone\n2\nchat\n"},
		{`[{"role": "user", "text": "hello there"}, "again", 3.5]`, "user\nhello there\nagain\n3.5\n"},
		{` {"a": {"b": {"c": "deep"}}, "d": "after"} `, "deep\nafter\n"},
		{`{"content": "unterminated"`, `{"content": "unterminated"`},
		{`{not json}`, `{not json}`},
		{`the {"content": "x"} in prose`, `the {"content": "x"} in prose`},
		{`{}`, ``},
	} {
		if got := Values(c.in); got != c.want {
			t.Errorf("Values(%s) = %q, want %q", c.in, got, c.want)
		}
	}
	body := `{"content": "the invoice for ACCT-7777 is due", "type": "note", "kind": "content"}`
	got := Document(body)
	if slices.Contains(got, "type") || !slices.Contains(got, "acct-7777") || !slices.Contains(got, "invoic") || !slices.Contains(got, "content") {
		t.Errorf("Document(%s) = %v: want the values' terms (content only as a value), no key", body, got)
	}
	for _, w := range Words(`{"type": "note", "content": "quarterly figures"}`) {
		if w.Term == "type" {
			t.Errorf("Words of a JSON body holds its key %q", w.Form)
		}
	}
}
