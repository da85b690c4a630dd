package httpapi

import (
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/custody-mem/custody"
)

// appendDecision writes exactly what encoding/json writes for a decision,
// on decisions with every field set or empty and strings of every kind of
// character JSON escapes; writeDecisions and writeDecision answer exactly
// as writeJSON does.
func TestAppendDecisionIsJSONMarshal(t *testing.T) {
	pieces := []string{"a", "Z", "7", " ", `"`, `\`, "<", ">", "&", "\n", "\r", "\t", "\b", "\f", "\x00", "\x1f", "\x7f",
		"é", "中", "\u2028", "\u2029", "\xff", "\xe2\x82", "😀", "/"}
	rng := rand.New(rand.NewPCG(11, 12))
	str := func() string {
		var b strings.Builder
		for range rng.IntN(6) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return b.String()
	}
	decision := func(i int) *custody.Decision {
		d := &custody.Decision{ID: str(), State: custody.State(str()), Authority: custody.Authority(rng.IntN(7) - 1), Reason: str(), LogIndex: rng.Uint64() >> rng.IntN(64)}
		if i%7 == 0 {
			return d // no receipt
		}
		r := &custody.Receipt{Decision: custody.State(str()), PolicyVersion: str(), Reason: str(), Actor: str(), LogIndex: rng.Uint64() >> rng.IntN(64)}
		if i%2 == 0 {
			r.Error = str()
		}
		switch i % 3 {
		case 1:
			r.Rules = []string{}
		case 2:
			r.Rules = []string{str(), str()}
		}
		switch i % 4 {
		case 1:
			r.Inputs = map[string]string{}
		case 2, 3:
			r.Inputs = map[string]string{str(): str(), str(): str(), "principal": str()}
		}
		if i%5 != 0 {
			r.Time = time.Unix(0, rng.Int64N(1<<62)).In(time.FixedZone("x", rng.IntN(3)*3600))
		}
		d.Receipt = r
		return d
	}
	var ds []*custody.Decision
	for i := range 5000 {
		d := decision(i)
		want, _ := json.Marshal(d)
		if got, ok := appendDecision(nil, d); !ok || string(got) != string(want) {
			t.Fatalf("appendDecision(%+v) =\n%s (%v)\nencoding/json gives\n%s", d, got, ok, want)
		}
		ds = append(ds, d)
	}
	answer := func(write func(http.ResponseWriter)) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		write(w)
		return w
	}
	same := func(name string, got, want *httptest.ResponseRecorder) {
		t.Helper()
		if got.Code != want.Code || got.Body.String() != want.Body.String() || len(got.Header()) != len(want.Header()) {
			t.Errorf("%s answered %d %v\n%.300s\nwriteJSON answers %d %v\n%.300s", name, got.Code, got.Header(), got.Body, want.Code, want.Header(), want.Body)
		}
		for k := range want.Header() {
			if got.Header().Get(k) != want.Header().Get(k) {
				t.Errorf("%s: header %s is %q, writeJSON's %q", name, k, got.Header().Get(k), want.Header().Get(k))
			}
		}
	}
	for _, batch := range [][]*custody.Decision{ds[:1000], nil, {}, {nil, ds[1]}} {
		same("writeDecisions", answer(func(w http.ResponseWriter) { writeDecisions(w, batch) }),
			answer(func(w http.ResponseWriter) { writeJSON(w, http.StatusOK, BatchResponse{Items: batch}) }))
	}
	same("writeDecision", answer(func(w http.ResponseWriter) { writeDecision(w, http.StatusCreated, ds[2]) }),
		answer(func(w http.ResponseWriter) { writeJSON(w, http.StatusCreated, ds[2]) }))

	// A time encoding/json cannot write fails both ways: a 500.
	far := decision(1)
	far.Receipt.Time = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, ok := appendDecision(nil, far); ok {
		t.Error("appendDecision wrote a receipt of the year 10000, which encoding/json refuses")
	}
	same("writeDecision of the year 10000", answer(func(w http.ResponseWriter) { writeDecision(w, http.StatusCreated, far) }),
		answer(func(w http.ResponseWriter) { writeJSON(w, http.StatusCreated, far) }))
	same("writeDecisions of the year 10000", answer(func(w http.ResponseWriter) { writeDecisions(w, []*custody.Decision{ds[3], far}) }),
		answer(func(w http.ResponseWriter) {
			writeJSON(w, http.StatusOK, BatchResponse{Items: []*custody.Decision{ds[3], far}})
		}))
}
