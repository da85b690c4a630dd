package httpapi

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"
)

// namespacesOf is the namespaces of a list or search answer, sorted.
func namespacesOf(t *testing.T, r resp) []string {
	t.Helper()
	var out []string
	for _, it := range items(t, r) {
		out = append(out, it["namespace"].(string))
	}
	slices.Sort(out)
	return out
}

// TestNamespacePrefix: namespace_prefix on GET /v1/memories and POST
// /v1/search keeps a namespace and those below it (work: work, work/notes;
// not workshop); with namespace as well, or malformed, it is a 400 that
// names the field and says what to send instead.
func TestNamespacePrefix(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env, _ func(testing.TB, string), _ backend) {
		alice := e.principal("acme", "alice", []string{"user"})
		for _, ns := range []string{"work", "work/notes", "workshop"} {
			want(t, e.do(alice, "POST", "/v1/memories", MemoryRequest{Namespace: ns, Class: "fact", Body: "ledger in " + ns, Channel: "user"}), http.StatusCreated, "")
		}
		wantNS := []string{"work", "work/notes"}
		r := e.do(alice, "GET", "/v1/memories?namespace_prefix=work", nil)
		want(t, r, http.StatusOK, "")
		if got := namespacesOf(t, r); !slices.Equal(got, wantNS) {
			t.Errorf("list under work: %v; want %v", got, wantNS)
		}
		r = e.do(alice, "POST", "/v1/search", SearchRequest{Query: "ledger", NamespacePrefix: "work"})
		want(t, r, http.StatusOK, "")
		if got := namespacesOf(t, r); !slices.Equal(got, wantNS) {
			t.Errorf("search under work: %v; want %v", got, wantNS)
		}

		for _, bad := range []struct {
			what string
			r    resp
		}{
			{"list with both", e.do(alice, "GET", "/v1/memories?namespace=work&namespace_prefix=work", nil)},
			{"search with both", e.do(alice, "POST", "/v1/search", SearchRequest{Query: "ledger", Namespace: "work", NamespacePrefix: "work"})},
			{"list with a malformed prefix", e.do(alice, "GET", "/v1/memories?namespace_prefix=work/", nil)},
			{"search with a malformed prefix", e.do(alice, "POST", "/v1/search", SearchRequest{Query: "ledger", NamespacePrefix: "bad prefix!"})},
		} {
			want(t, bad.r, http.StatusBadRequest, "invalid_input")
			var b ErrorBody
			if err := json.Unmarshal(bad.r.body, &b); err != nil || b.Error.Field != "namespace_prefix" || b.Error.Message == "" {
				t.Errorf("%s: %s; want an error naming namespace_prefix", bad.what, bad.r.body)
			}
		}
	})
}
