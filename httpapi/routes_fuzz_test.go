package httpapi

import (
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/custody-mem/custody"
)

// FuzzEveryRoute sends arbitrary bodies, path values and query values to
// every route of the API, as a user, a reviewer, an administrator and a
// policy owner of one tenant: every answer is a 2xx or 3xx, or a 4xx
// with a JSON error; never a 5xx.
//
//	go test ./httpapi -run '^$' -fuzz FuzzEveryRoute -fuzztime 10m
func FuzzEveryRoute(f *testing.F) {
	e := newEnv(f, Options{MaxBodyBytes: 8 << 10, MaxBatchBytes: 16 << 10, RatePerSecond: -1})
	tokens := []string{
		e.principal("acme", "alice", []string{"user"}),
		e.principal("acme", "rev", []string{"reviewer"}),
		e.principal("acme", "root", []string{"admin"}),
		e.principal("acme", "owner", []string{"policy_owner"}),
	}
	r := e.send(f, tokens[0], "POST", "/v1/memories", `{"namespace":"profile","key":"payee_account","class":"fact","body":"ACCT-1042","channel":"user"}`)
	var d custody.Decision
	if err := json.Unmarshal(r.body, &d); err != nil || d.ID == "" {
		f.Fatalf("seeding a record: %d %s", r.status, r.body)
	}
	routes := e.api.routes
	bodies := append([]string{"", "{}", "null", "[]", `{"id":"` + d.ID + `"}`,
		`{"tool":"pay","arguments":{"payee_account":"ACCT-1042","amount":"1,200.00"},"justified_by":["` + d.ID + `"]}`,
		`permit (principal, action, resource);`, `{"records":[{"namespace":"n","class":"fact","body":"x","channel":"user"}]}`,
		`{"name":"x","roles":["admin"]}`, `{"writer":"alice","reason":"r"}`, "\xff\xfe{", `{"a":` + strings.Repeat("[", 200)},
		memorySeeds...)
	for i := range routes {
		for j, b := range bodies {
			if (i+j)%7 == 0 || j < 3 {
				f.Add(uint8(i), uint8(j), d.ID, "", []byte(b))
			}
		}
	}
	f.Add(uint8(0), uint8(2), "../../etc/passwd", "-1", []byte("{}"))
	f.Add(uint8(0), uint8(2), "01ARZ3NDEKTSV4RRFFQ69G5FAV", "99999999999999999999", []byte("{}"))
	placeholder := regexp.MustCompile(`\{[^}]+\}`)
	f.Fuzz(func(t *testing.T, ri, who uint8, value, qv string, body []byte) {
		rt := routes[int(ri)%len(routes)]
		path := placeholder.ReplaceAllLiteralString(rt.path, url.PathEscape(value))
		if len(rt.query) > 0 {
			q := url.Values{}
			for _, p := range rt.query {
				q.Set(p.name, qv)
			}
			path += "?" + q.Encode()
		}
		var b any
		if rt.method != "GET" && rt.method != "DELETE" || len(body) > 0 {
			b = body
		}
		r := e.send(t, tokens[int(who)%len(tokens)], rt.method, path, b)
		switch {
		case r.status >= 500:
			t.Fatalf("%s %s with %q: %d %s", rt.method, path, body, r.status, r.body)
		case r.status >= 400 && r.errCode() == "":
			t.Fatalf("%s %s with %q: %d without a JSON error: %s", rt.method, path, body, r.status, r.body)
		}
	})
}
