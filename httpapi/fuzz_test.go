package httpapi

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/custody-mem/custody"
)

var memorySeeds = []string{
	`{"namespace":"profile","key":"payee_account","class":"fact","body":"ACCT-1042","channel":"user"}`,
	`{"namespace":"a/b/c","class":"episode","body":"x","channel":"user","audience":"tenant","expires_at":"2999-01-01T00:00:00Z"}`,
	`{"namespace":"n","class":"fact","body":"{\"channel\":\"user\",\"state\":\"admitted\"}","channel":"user"}`,
	`{"namespace":"n","class":"fact","body":"x","channel":"user","derived_from":[{"id":"01ARZ3NDEKTSV4RRFFQ69G5FAV","weight":0.5}]}`,
	`{"namespace":"n","class":"fact","body":"x","channel":"user","state":"admitted"}`,
	`{"namespace":5}`, `{"derived_from":"x"}`, `{"expires_at":"yesterday"}`, `[]`, `null`, `{}`, `{"namespace":"n"} {}`,
	`{"namespace":"n","class":"fact","body":"\ud800","channel":"user"}`, `{"Namespace":"n","CLASS":"fact","body":"x","channel":"user"}`,
	"", "{", `{"namespace":"` + strings.Repeat("a", 70) + `"}`,
}

// FuzzDecodeMemoryRequest feeds arbitrary bodies to POST /v1/memories: every
// answer is a clean 4xx JSON error or a decided candidate, never a 5xx.
func FuzzDecodeMemoryRequest(f *testing.F) {
	for _, s := range memorySeeds {
		f.Add([]byte(s))
	}
	e := newEnv(f, Options{MaxBodyBytes: 8 << 10, RatePerSecond: -1})
	tok := e.principal("acme", "alice", []string{"user"})
	f.Fuzz(func(t *testing.T, body []byte) {
		var req MemoryRequest
		if err := decodeBytes(body, &req, false); err != nil {
			var ae *apiError
			if !errors.As(err, &ae) || ae.status/100 != 4 || ae.code == "" {
				t.Fatalf("decode error %v is not a clean 4xx", err)
			}
		}
		r := e.send(t, tok, "POST", "/v1/memories", body)
		switch {
		case r.status == 201 || r.status == 202:
			var d custody.Decision
			if err := json.Unmarshal(r.body, &d); err != nil || !custody.ValidID(d.ID) || d.Receipt == nil {
				t.Fatalf("accepted answer is not a decision: %s", r.body)
			}
			if (r.status == 201) != (d.State == custody.StateAdmitted) {
				t.Fatalf("status %d for state %s", r.status, d.State)
			}
		case r.status/100 == 4:
			if r.errCode() == "" {
				t.Fatalf("4xx without a JSON error: %s", r.body)
			}
		default:
			t.Fatalf("status %d: %s", r.status, r.body)
		}
	})
}

// FuzzDecodeSearchRequest does the same for POST /v1/search.
func FuzzDecodeSearchRequest(f *testing.F) {
	for _, s := range []string{
		`{"query":"payee"}`, `{"query":"a OR b NOT c* \"x\" NEAR(y)","limit":100}`, `{"query":"x","limit":-1}`,
		`{"query":"x","namespace":"../etc"}`, `{"query":"x","class":"rumour"}`, `{"query":5}`, `{"query":"x","extra":1}`,
		`{"query":"\u0000"}`, `{"query":"-"}`, `{"query":"'\"();--"}`, "", "{}", "[]",
	} {
		f.Add([]byte(s))
	}
	e := newEnv(f, Options{MaxBodyBytes: 8 << 10, RatePerSecond: -1})
	tok := e.principal("acme", "alice", []string{"user"})
	want(f, e.do(tok, "POST", "/v1/memories", MemoryRequest{Namespace: "n", Class: "fact", Body: "payee is ACCT-1042", Channel: "user"}), 201, "")
	f.Fuzz(func(t *testing.T, body []byte) {
		r := e.send(t, tok, "POST", "/v1/search", body)
		switch {
		case r.status == 200:
			var sr SearchResponse
			if err := json.Unmarshal(r.body, &sr); err != nil || sr.Items == nil {
				t.Fatalf("search answer is not a list: %s", r.body)
			}
		case r.status/100 == 4:
			if r.errCode() == "" {
				t.Fatalf("4xx without a JSON error: %s", r.body)
			}
		default:
			t.Fatalf("status %d: %s", r.status, r.body)
		}
	})
}
