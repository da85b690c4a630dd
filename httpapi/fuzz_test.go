package httpapi

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

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

// FuzzCheckText: checkText accepts a JSON document exactly when decoding it
// loses nothing, that is, when every string decodes to what re-encoding
// would send back; it never panics.
func FuzzCheckText(f *testing.F) {
	for _, s := range []string{
		`{"body":"\ud800"}`, `{"body":"\ud83d\ude00"}`, `{"body":"\ufffd"}`, "{\"body\":\"\xff\"}",
		`{"a":["\udc00"]}`, `{"\ud800":"x"}`, `{"a":{"b":"\\ud800"}}`, `["x","\uD83D\uDE00"]`, `"\u12"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		err := checkText(b)
		var v any
		if json.Unmarshal(b, &v) != nil {
			return
		}
		lossy := hasLoss(b)
		if (err != nil) != lossy {
			t.Fatalf("checkText(%q) = %v, but the document is lossy=%v", b, err, lossy)
		}
		if err != nil {
			var ae *apiError
			if !errors.As(err, &ae) || ae.status != 400 || ae.code != "invalid_input" {
				t.Fatalf("checkText error %v is not a 400 invalid_input", err)
			}
		}
	})
}

// hasLoss is a slow reference for checkText: it decodes every string of b
// alone and reports whether any raw string was not valid UTF-8 or held a
// lone surrogate escape, found by comparing against a decoder that keeps
// the UTF-16 units.
func hasLoss(b []byte) bool {
	for i := 0; i < len(b); i++ {
		if b[i] != '"' {
			continue
		}
		end, problem := scanStringRef(b, i)
		if problem {
			return true
		}
		i = end - 1
	}
	return false
}

// scanStringRef decodes the JSON string at b[start] into UTF-16 units and
// reports whether it was lossy: invalid UTF-8, or a surrogate unit not in a
// high-low pair.
func scanStringRef(b []byte, start int) (end int, lossy bool) {
	var units []uint16
	i := start + 1
	for i < len(b) && b[i] != '"' {
		if b[i] == '\\' {
			if b[i+1] == 'u' {
				n, _ := strconv.ParseUint(string(b[i+2:i+6]), 16, 16)
				units = append(units, uint16(n))
				i += 6
				continue
			}
			units = append(units, uint16(b[i+1]))
			i += 2
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			lossy = true
		}
		units = append(units, utf16.Encode([]rune{r})...)
		i += size
	}
	for j := 0; j < len(units); j++ {
		u := units[j]
		switch {
		case utf16.IsSurrogate(rune(u)) && u < 0xDC00 && j+1 < len(units) && units[j+1] >= 0xDC00 && units[j+1] <= 0xDFFF:
			j++
		case utf16.IsSurrogate(rune(u)):
			lossy = true
		}
	}
	return i + 1, lossy
}
