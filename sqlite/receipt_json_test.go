package sqlite

import (
	"math/rand/v2"
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
