package sqlite

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
)

// appendReceipt writes exactly what encoding/json writes for a stored
// receipt, on receipts with every field set or empty and strings of every
// kind of character JSON escapes.
func TestAppendReceiptIsJSONMarshal(t *testing.T) {
	pieces := []string{"a", "Z", "7", " ", `"`, `\`, "<", ">", "&", "\n", "\r", "\t", "\b", "\f", "\x00", "\x1f", "\x7f",
		"é", "中", "\u2028", "\u2029", "\xff", "\xe2\x82", "😀", "/"}
	rng := rand.New(rand.NewPCG(9, 10))
	str := func() string {
		var b strings.Builder
		for range rng.IntN(6) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return b.String()
	}
	for i := range 5000 {
		s := storedReceipt{Decision: custody.State(str()), PolicyVersion: str(), Reason: str(), Error: str(), Actor: str(), Same: str()}
		switch i % 3 {
		case 0:
			s.Rules = nil
		case 1:
			s.Rules = []string{}
		default:
			s.Rules = []string{str(), str()}
		}
		if i%2 == 0 {
			s.Inputs = map[string]string{str(): str(), str(): str(), "principal": str()}
		} else if i%4 == 1 {
			s.Inputs = map[string]string{}
		}
		if i%5 != 0 {
			s.Time = time.Unix(0, rng.Int64N(1<<62)).In(time.FixedZone("x", rng.IntN(3)*3600))
		}
		if i%3 != 0 {
			s.LogIndex = rng.Uint64()
		}
		if got, want := string(appendReceipt(nil, &s)), jsonText(s); got != want {
			t.Fatalf("appendReceipt(%+v) =\n%s\nencoding/json gives\n%s", s, got, want)
		}
	}
}

// parseReceipt decodes what encoding/json decodes, on every receipt
// appendReceipt writes (escapes and all) and on those texts damaged at
// random: where it accepts a text, its receipt is encoding/json's, and
// where encoding/json refuses one, so does it.
func TestParseReceiptIsJSONUnmarshal(t *testing.T) {
	pieces := []string{"a", "Z", "7", " ", "é", "中", "😀", "/", `"`, `\`, "<", "&", "\n", "\x00", "\u2028", "\xff"}
	plain := 8 // the first pieces need no escape
	rng := rand.New(rand.NewPCG(11, 12))
	var str func() string
	fast := 0
	for i := range 20000 {
		n := len(pieces)
		if i%2 == 0 {
			n = plain
		}
		str = func() string {
			var b strings.Builder
			for range rng.IntN(5) {
				b.WriteString(pieces[rng.IntN(n)])
			}
			return b.String()
		}
		s := storedReceipt{Decision: custody.State(str()), PolicyVersion: str(), Reason: str(), Error: str(), Actor: str(), Same: str()}
		if i%3 != 0 {
			s.Rules = []string{str(), str()}
		}
		if i%2 == 0 {
			s.Inputs = map[string]string{str(): str(), "principal": str()}
		}
		if i%5 != 0 {
			s.Time = time.Unix(0, rng.Int64N(1<<62)).In(time.FixedZone("x", rng.IntN(3)*3600))
		}
		if i%3 != 0 {
			s.LogIndex = rng.Uint64()
		}
		text := string(appendReceipt(nil, &s))
		if i%4 == 3 { // damaged: a byte changed, dropped or doubled
			j := rng.IntN(len(text))
			switch rng.IntN(3) {
			case 0:
				const damage = `{}[]":,0n\ x`
				text = text[:j] + string(damage[rng.IntN(len(damage))]) + text[j+1:]
			case 1:
				text = text[:j] + text[j+1:]
			default:
				text = text[:j] + text[j:j+1] + text[j:]
			}
		}
		var got, want storedReceipt
		gerr := parseReceipt(text, &got)
		werr := json.Unmarshal([]byte(text), &want)
		if (gerr == nil) != (werr == nil) {
			t.Fatalf("%q: parseReceipt error %v, encoding/json error %v", text, gerr, werr)
		}
		if werr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\nparseReceipt  %+v\nencoding/json %+v", text, got, want)
		}
		if p := (receiptParser{text: text}); p.receipt(new(storedReceipt)) && p.i == len(text) {
			fast++
		}
	}
	if fast < 2000 {
		t.Fatalf("only %d of 20,000 receipts took the fast path", fast)
	}
}

// FuzzParseReceipt checks parseReceipt against encoding/json on any text:
// go test ./sqlite -run '^$' -fuzz FuzzParseReceipt -fuzztime 1m.
func FuzzParseReceipt(f *testing.F) {
	f.Add(`{"decision":"admitted","policy_version":"p","rules":["a"],"reason":"r","inputs":{"k":"v"},"actor":"acme/alice","time":"2026-12-01T10:00:00Z","log_index":7,"same":"tb"}`)
	f.Add(`{"rules":null,"reason":""}`)
	f.Add(`{"Decision":"x","rules":[],"inputs":{}}`)
	f.Fuzz(func(t *testing.T, text string) {
		var got, want storedReceipt
		gerr := parseReceipt(text, &got)
		werr := json.Unmarshal([]byte(text), &want)
		if (gerr == nil) != (werr == nil) || werr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: parseReceipt %+v (%v), encoding/json %+v (%v)", text, got, gerr, want, werr)
		}
	})
}
