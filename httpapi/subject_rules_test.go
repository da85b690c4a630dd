package httpapi

import (
	"net/http"
	"testing"
)

// TestSubjectIsAUser pins design section 2: the subject of a request is a
// user principal of the tenant. An agent naming itself, another agent, a
// reviewer-only principal, or a user of another tenant gets 403
// subject_not_allowed on reads and writes, and nothing is written. Twins:
// an agent naming a real user, a user acting for itself (named or not), a
// reviewer acting for itself on the review queue (but not for a user), and
// an admin naming a user.
func TestSubjectIsAUser(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env, _ func(testing.TB, string), _ backend) {
		alice := e.principal("acme", "alice", []string{"user"})
		harness := e.principal("acme", "harness", []string{"agent"}, "agent")
		e.principal("acme", "indexer", []string{"agent"}, "agent")
		rita := e.principal("acme", "rita", []string{"reviewer"})
		e.principal("acme-corp", "carol", []string{"user"})
		write := func(token, subject string) resp {
			return e.do(token, "POST", "/v1/memories", MemoryRequest{Namespace: "n", Class: "episode", Body: "booked a train", Channel: "agent", Subject: subject})
		}
		for _, sub := range []string{"harness", "indexer", "rita", "carol"} {
			want(t, write(harness, sub), http.StatusForbidden, "subject_not_allowed")
			want(t, e.do(harness, "GET", "/v1/memories?subject="+sub, nil), http.StatusForbidden, "subject_not_allowed")
			want(t, e.do(harness, "POST", "/v1/search", SearchRequest{Query: "train", Subject: sub}), http.StatusForbidden, "subject_not_allowed")
			want(t, e.do(harness, "POST", "/v1/sessions", SessionRequest{Subject: sub}), http.StatusForbidden, "subject_not_allowed")
		}
		if n := storedCount(t, e, "acme"); n != 0 {
			t.Fatalf("refused writes left %d records", n)
		}

		r := write(harness, "alice")
		want(t, r, http.StatusCreated, "")
		if got := r.json(t)["authority"]; got != "agent" {
			t.Errorf("agent episode for alice: authority %v", got)
		}
		if got := items(t, e.do(harness, "GET", "/v1/memories?subject=alice", nil)); len(got) != 1 || got[0]["owner"] != "alice" {
			t.Errorf("the agent lists alice's memories: %v", got)
		}
		for _, q := range []string{"", "?subject=alice"} {
			r := e.do(alice, "GET", "/v1/memories"+q, nil)
			want(t, r, http.StatusOK, "")
			if got := items(t, r); len(got) != 1 {
				t.Errorf("alice lists her memories (%q): %s", q, r.body)
			}
		}
		want(t, e.do(rita, "GET", "/v1/review", nil), http.StatusOK, "")

		// A reviewer does not act for a user; an admin may.
		root := e.principal("acme", "root", []string{"admin"})
		want(t, e.do(rita, "GET", "/v1/memories?subject=alice", nil), http.StatusForbidden, "subject_not_allowed")
		want(t, e.do(rita, "POST", "/v1/search", SearchRequest{Query: "train", Subject: "alice"}), http.StatusForbidden, "subject_not_allowed")
		r = e.do(root, "GET", "/v1/memories?subject=alice", nil)
		want(t, r, http.StatusOK, "")
		if got := items(t, r); len(got) != 1 {
			t.Errorf("the admin lists alice's memories: %s", r.body)
		}
	})
}
