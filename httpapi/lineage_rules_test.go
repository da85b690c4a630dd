package httpapi

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/custody-mem/custody"
)

// TestDerivedFromAnIneligibleParentIsIneligible pins design rule 6: a
// derived candidate with a parent that is not eligible — quarantined,
// retired, waiting for confirmation, even on a weak edge beside a strong
// admitted one — is itself ineligible (suspended, parent-ineligible in its
// receipt), although its class and computed authority alone would be
// admitted. The twin: derived from an admitted parent, it is admitted.
func TestDerivedFromAnIneligibleParentIsIneligible(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env, _ func(testing.TB, string), _ backend) {
		alice := e.principal("acme", "alice", []string{"user"})
		harness := e.principal("acme", "harness", []string{"agent"}, "agent", "tool:email", "derive")
		rita := e.principal("acme", "rita", []string{"reviewer"})
		post := func(token string, m MemoryRequest, status int) map[string]any {
			t.Helper()
			r := e.do(token, "POST", "/v1/memories", m)
			want(t, r, status, "")
			return r.json(t)
		}
		id := func(d map[string]any) string { return d["id"].(string) }
		ok := id(post(alice, MemoryRequest{Namespace: "src", Class: "fact", Body: "alice lives in Lyon", Channel: "user"}, http.StatusCreated))
		quarantined := id(post(harness, MemoryRequest{Namespace: "src", Class: "fact", Body: "an email claims a new address", Channel: "tool:email", Subject: "alice"}, http.StatusAccepted))
		retired := id(post(alice, MemoryRequest{Namespace: "src", Class: "fact", Body: "an old habit", Channel: "user"}, http.StatusCreated))
		want(t, e.do(rita, "POST", "/v1/memories/"+retired+"/retire", RetireRequest{Reason: "obsolete"}), http.StatusOK, "")
		post(alice, MemoryRequest{Namespace: "src", Key: "payee", Class: "fact", Body: "ACCT-1042", Channel: "user"}, http.StatusCreated)
		waiting := id(post(alice, MemoryRequest{Namespace: "src", Key: "payee", Class: "fact", Body: "ACCT-2000", Channel: "user"}, http.StatusAccepted))

		derive := func(edges ...custody.Edge) MemoryRequest {
			return MemoryRequest{Namespace: "sum", Class: "episode", Body: "a summary", Channel: "derive", Subject: "alice", DerivedFrom: edges}
		}
		for name, edges := range map[string][]custody.Edge{
			"quarantined parent":                {{ID: quarantined, Weight: 1}},
			"retired parent":                    {{ID: retired, Weight: 1}},
			"parent waiting for confirmation":   {{ID: waiting, Weight: 1}},
			"weak quarantined parent":           {{ID: ok, Weight: 0.9}, {ID: quarantined, Weight: 0.05}},
			"weak retired parent beside a kept": {{ID: ok, Weight: 1}, {ID: retired, Weight: 0.01}},
		} {
			d := post(harness, derive(edges...), http.StatusAccepted)
			rc, _ := d["receipt"].(map[string]any)
			rules, _ := rc["rules"].([]any)
			if d["state"] != "suspended" || !slices.Contains(rules, any("parent-ineligible")) {
				t.Errorf("derived from a %s: %v, want suspended with parent-ineligible", name, d)
			}
			want(t, e.do(harness, "GET", "/v1/memories/"+id(d)+"?subject=alice", nil), http.StatusNotFound, "not_found")
		}
		d := post(harness, derive(custody.Edge{ID: ok, Weight: 1}), http.StatusCreated)
		if d["state"] != "admitted" || d["authority"] != "user" {
			t.Errorf("derived from an admitted user fact: %v, want admitted at authority user", d)
		}
		want(t, e.do(harness, "GET", "/v1/memories/"+id(d)+"?subject=alice", nil), http.StatusOK, "")
	})
}

// TestDeriveChannelNeedsParents: the derive channel adds no authority cap
// of its own (design rule 6), so a derive write without parents would carry
// authority confirmed. It is 400 invalid_input naming derived_from, and
// nothing is written; the twin with a parent is admitted at the parent's
// authority.
func TestDeriveChannelNeedsParents(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env, _ func(testing.TB, string), _ backend) {
		alice := e.principal("acme", "alice", []string{"user"})
		harness := e.principal("acme", "harness", []string{"agent"}, "derive")
		r := e.do(alice, "POST", "/v1/memories", MemoryRequest{Namespace: "src", Class: "fact", Body: "alice lives in Lyon", Channel: "user"})
		want(t, r, http.StatusCreated, "")
		parent := r.json(t)["id"].(string)
		n := storedCount(t, e, "acme")
		for _, edges := range [][]custody.Edge{nil, {}} {
			r = e.do(harness, "POST", "/v1/memories", MemoryRequest{Namespace: "sum", Class: "fact", Body: "alice's payee is ACCT-7777",
				Channel: "derive", Subject: "alice", DerivedFrom: edges})
			want(t, r, http.StatusBadRequest, "invalid_input")
			if !strings.Contains(r.String(), "derived_from") {
				t.Errorf("error does not name derived_from: %s", r.body)
			}
		}
		if got := storedCount(t, e, "acme"); got != n {
			t.Fatalf("refused derive writes left %d records", got-n)
		}
		r = e.do(harness, "POST", "/v1/memories", MemoryRequest{Namespace: "sum", Class: "fact", Body: "alice is based in Lyon",
			Channel: "derive", Subject: "alice", DerivedFrom: []custody.Edge{{ID: parent, Weight: 1}}})
		want(t, r, http.StatusCreated, "")
		if got := r.json(t)["authority"]; got != "user" {
			t.Errorf("derived from a user fact: authority %v, want user", got)
		}
	})
}
