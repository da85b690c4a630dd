package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestHistoryMarksTheVersionInForce: of a key written twice, the history
// says which version is in force: the older admitted one carries
// superseded_by and no body (it is not part of memory), the newer one its
// body. A version held for confirmation supersedes nothing: the version it
// would replace stays in force, with its body, until the owner confirms.
func TestHistoryMarksTheVersionInForce(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env, _ func(testing.TB, string), _ backend) {
		alice := e.principal("acme", "alice", []string{"user"}, "user")
		write := func(key, body string, status int) string {
			r := e.do(alice, "POST", "/v1/memories", MemoryRequest{Namespace: "p", Key: key, Class: "fact", Body: body, Channel: "user"})
			want(t, r, status, "")
			return r.json(t)["id"].(string)
		}
		history := func(id string) []map[string]any {
			r := e.do(alice, "GET", "/v1/memories/"+id+"/history", nil)
			want(t, r, http.StatusOK, "")
			var h struct{ Items []map[string]any }
			if err := json.Unmarshal(r.body, &h); err != nil {
				t.Fatal(err)
			}
			return h.Items
		}
		v1, v2 := write("city", "OLD-CITY", http.StatusCreated), write("city", "NEW-CITY", http.StatusCreated)
		vs := history(v1)
		if len(vs) != 2 || vs[0]["id"] != v1 || vs[1]["id"] != v2 {
			t.Fatalf("history = %v, want v1 then v2", vs)
		}
		if vs[0]["superseded_by"] != float64(2) || vs[0]["body"] != "" || vs[0]["withheld"] != true || vs[0]["state"] != "admitted" {
			t.Errorf("v1 = %v, want state admitted, superseded_by 2, its body withheld", vs[0])
		}
		if _, marked := vs[1]["superseded_by"]; marked || vs[1]["body"] != "NEW-CITY" {
			t.Errorf("v2 = %v, want it in force with its body", vs[1])
		}
		// A sensitive key's overwrite waits for confirmation: nothing is superseded meanwhile.
		p1 := write("payee", "ACCT-1", http.StatusCreated)
		p2 := write("payee", "ACCT-2", http.StatusAccepted)
		vs = history(p2)
		if _, marked := vs[0]["superseded_by"]; marked || vs[0]["body"] != "ACCT-1" || vs[1]["state"] != "pending_confirmation" {
			t.Errorf("history while the overwrite waits = %v, want ACCT-1 in force", vs)
		}
		want(t, e.do(alice, "POST", "/v1/memories/"+p2+"/confirm", nil), http.StatusOK, "")
		vs = history(p1)
		if vs[0]["superseded_by"] != float64(2) || strings.Contains(vs[0]["body"].(string), "ACCT-1") || vs[1]["body"] != "ACCT-2" {
			t.Errorf("history after the confirmation = %v, want ACCT-2 in force and ACCT-1 superseded", vs)
		}
	})
}
