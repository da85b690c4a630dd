package httpapi

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/custody-mem/custody"
)

// TestRebuildCascadeStopsAtARecordStillOut pins design rule 10's rebuild:
// rebuilding a record brings back the descendants whose parents are all
// eligible again, and no further. A child that stays suspended (another
// strong parent is still quarantined) keeps its own descendants suspended
// too, even one that hangs from it by a weak edge; the twin: rebuilding
// that grandchild explicitly drops the weak edge and re-admits it.
func TestRebuildCascadeStopsAtARecordStillOut(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env, _ func(testing.TB, string), _ backend) {
		alice := e.principal("acme", "alice", []string{"user"})
		harness := e.principal("acme", "harness", []string{"agent"}, "derive")
		rita := e.principal("acme", "rita", []string{"reviewer"})
		post := func(token string, m MemoryRequest) string {
			t.Helper()
			r := e.do(token, "POST", "/v1/memories", m)
			want(t, r, http.StatusCreated, "")
			return r.json(t)["id"].(string)
		}
		fact := func(body string) string {
			return post(alice, MemoryRequest{Namespace: "src", Class: "fact", Body: body, Channel: "user"})
		}
		derive := func(body string, edges ...custody.Edge) string {
			return post(harness, MemoryRequest{Namespace: "sum", Class: "episode", Body: body, Channel: "derive", Subject: "alice", DerivedFrom: edges})
		}
		p, q, a := fact("p: rent is due monthly"), fact("q: the landlord is Bob"), fact("a: alice lives in Lyon")
		d := derive("d: rent monthly", custody.Edge{ID: p, Weight: 1})
		kid := derive("kid: pays Bob monthly", custody.Edge{ID: d, Weight: 1}, custody.Edge{ID: q, Weight: 1})
		grand := derive("grand: Lyon rent", custody.Edge{ID: kid, Weight: 0.1}, custody.Edge{ID: a, Weight: 0.9})
		repair := func(id, op string, body any) []string {
			t.Helper()
			r := e.do(rita, "POST", "/v1/memories/"+id+"/"+op, body)
			want(t, r, http.StatusOK, "")
			var a AffectedResponse
			if err := json.Unmarshal(r.body, &a); err != nil {
				t.Fatal(err)
			}
			return a.Affected
		}
		if got := repair(p, "quarantine", QuarantineRequest{Reason: "check"}); !slices.Contains(got, grand) {
			t.Fatalf("quarantining p affected %q, want the grandchild among them", got)
		}
		repair(q, "quarantine", QuarantineRequest{Reason: "check"})
		want(t, e.do(rita, "POST", "/v1/review/"+p+"/approve", nil), http.StatusOK, "")

		if got := repair(d, "rebuild", RebuildRequest{}); !slices.Equal(got, []string{d}) {
			t.Errorf("rebuilding d affected %q, want d alone (kid still has q out)", got)
		}
		want(t, e.do(alice, "GET", "/v1/memories/"+d, nil), http.StatusOK, "")
		for _, id := range []string{kid, grand} {
			want(t, e.do(alice, "GET", "/v1/memories/"+id, nil), http.StatusNotFound, "not_found")
		}
		if got := repair(grand, "rebuild", RebuildRequest{}); !slices.Equal(got, []string{grand}) {
			t.Errorf("rebuilding the grandchild affected %q, want it alone", got)
		}
		want(t, e.do(alice, "GET", "/v1/memories/"+grand, nil), http.StatusOK, "")
	})
}
