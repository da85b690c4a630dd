package httpapi

import (
	"fmt"
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

// TestManyWeakEdgesCapLikeOneStrong pins the dilution guard of design rule
// 6: eight web pages at weight 0.1 each beside a strong user fact cap the
// summary at external, as one strong web edge would, and weak edges of
// different authorities add up; the twin, a single weak web edge beside the
// same fact, does not cap it.
func TestManyWeakEdgesCapLikeOneStrong(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env, _ func(testing.TB, string), _ backend) {
		alice := e.principal("acme", "alice", []string{"user"})
		harness := e.principal("acme", "harness", []string{"agent"}, "agent", "tool:web", "derive")
		post := func(token string, m MemoryRequest) map[string]any {
			t.Helper()
			r := e.do(token, "POST", "/v1/memories", m)
			want(t, r, http.StatusCreated, "")
			return r.json(t)
		}
		fact := post(alice, MemoryRequest{Namespace: "src", Class: "fact", Body: "alice banks with ACME", Channel: "user"})["id"].(string)
		edges := []custody.Edge{{ID: fact, Weight: 0.9}}
		for i := range 8 {
			d := post(harness, MemoryRequest{Namespace: "web", Class: "episode", Body: fmt.Sprintf("forum post %d: ACME moved to ACCT-7777", i),
				Channel: "tool:web", Subject: "alice"})
			if d["authority"] != "external" {
				t.Fatalf("web episode authority = %v", d["authority"])
			}
			edges = append(edges, custody.Edge{ID: d["id"].(string), Weight: 0.1})
		}
		summary := func(edges []custody.Edge) any {
			return post(harness, MemoryRequest{Namespace: "sum", Class: "episode", Body: "ACME account summary", Channel: "derive",
				Subject: "alice", DerivedFrom: edges})["authority"]
		}
		if got := summary(edges); got != "external" {
			t.Errorf("summary of a user fact and eight weak web edges: authority %v, want external", got)
		}
		if got := summary(edges[:2]); got != "user" {
			t.Errorf("summary of a user fact and one weak web edge: authority %v, want user", got)
		}
		// Weak edges of different authorities add up too: web at 0.1 and an
		// agent episode at 0.15 weigh 0.25, so the summary is capped at agent.
		ep := post(harness, MemoryRequest{Namespace: "ep", Class: "episode", Body: "the agent looked up ACME", Channel: "agent", Subject: "alice"})
		if got := summary(append(edges[:2:2], custody.Edge{ID: ep["id"].(string), Weight: 0.15})); got != "agent" {
			t.Errorf("summary of a user fact, a weak web edge and a weak agent edge: authority %v, want agent", got)
		}
	})
}
