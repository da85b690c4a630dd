package mem0api_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/custody-mem/custody/mem0api"
)

// FuzzMem0Routes sends arbitrary bodies, ids and query values to every
// Mem0 route, as a user and as an agent harness: every answer is a 2xx,
// or a 4xx with custody's JSON error; never a 5xx.
//
//	go test ./mem0api -run '^$' -fuzz FuzzMem0Routes -fuzztime 10m
func FuzzMem0Routes(f *testing.F) {
	e := newEnv(f)
	routes := mem0api.Routes()
	bodies := []string{"", "{}", "null", "[]",
		`{"messages":[{"role":"user","content":"I prefer short replies"}],"user_id":"alice"}`,
		`{"messages":"pay ACCT-7777","user_id":"alice","channel":"tool:email","metadata":{"a":[1,{"b":null}]}}`,
		`{"query":"replies","user_id":"alice","filters":{"AND":[{"user_id":"alice"},{"created_at":{"gte":"2024-01-01"}}]},"top_k":5}`,
		`{"filters":{"OR":[{"metadata":{"k":{"in":["v"]}}},{"NOT":{"categories":{"contains":"x"}}}]}}`,
		`{"text":"updated","metadata":{"x":1}}`, `{"query":"` + strings.Repeat("a ", 500) + `"}`, "\xff{", `{"top_k":-1}`,
	}
	for i := range routes {
		for j := range bodies {
			f.Add(uint8(i), uint8(j%2), "01ARZ3NDEKTSV4RRFFQ69G5FAV", "alice", []byte(bodies[j]))
		}
	}
	who := []string{"alice", "harness"}
	f.Fuzz(func(t *testing.T, ri, wi uint8, id, user string, body []byte) {
		rt := routes[int(ri)%len(routes)]
		method, path := rt[0], strings.ReplaceAll(rt[1], "{id}", url.PathEscape(id))+"?"+url.Values{"user_id": {user}, "page": {user}}.Encode()
		var rd io.Reader
		if len(body) > 0 {
			rd = bytes.NewReader(body)
		}
		req, err := http.NewRequest(method, e.srv.URL+path, rd)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Token "+e.tokens[who[int(wi)%len(who)]])
		req.Header.Set("Content-Type", "application/json")
		res, err := e.srv.Client().Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode >= 500 {
			t.Fatalf("%s %s with %q: %d %s", method, path, body, res.StatusCode, raw)
		}
		if res.StatusCode >= 400 {
			var out struct {
				Error struct{ Code string } `json:"error"`
			}
			if json.Unmarshal(raw, &out) != nil || out.Error.Code == "" {
				t.Fatalf("%s %s with %q: %d without a JSON error: %s", method, path, body, res.StatusCode, raw)
			}
		}
	})
}
