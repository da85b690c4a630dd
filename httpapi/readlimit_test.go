package httpapi

import (
	"fmt"
	"testing"
)

// TestLogReadsHaveTheirOwnBudget pins that proof and entry reads do not
// use up a principal's write budget (nor the reverse), and that anonymous
// tile reads are limited per client address.
func TestLogReadsHaveTheirOwnBudget(t *testing.T) {
	e := newEnv(t, Options{RatePerSecond: 0.0001, RateBurst: 3, LogReadRatePerSecond: 0.0001, LogReadBurst: 5})
	alice := e.principal("acme", "alice", []string{"user"})
	write := func(i int) resp {
		return e.do(alice, "POST", "/v1/memories", MemoryRequest{Namespace: "n", Class: "episode", Body: fmt.Sprintf("entry %d", i), Channel: "user"})
	}
	want(t, write(0), 201, "")
	if _, err := e.svc.Checkpoint(e.ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	// Five log reads: within the read budget, and none of them counts
	// against the writes.
	for range 5 {
		want(t, e.do(alice, "GET", "/v1/log/proof/inclusion?index=0&size=1", nil), 200, "")
	}
	want(t, write(1), 201, "")
	want(t, write(2), 201, "")
	want(t, write(3), 429, "rate_limited") // the write budget (3) is spent
	r := e.do(alice, "GET", "/v1/log/proof/inclusion?index=0&size=1", nil)
	want(t, r, 429, "rate_limited") // and so is the read budget (5), on its own
	if r.header.Get("Retry-After") == "" {
		t.Fatal("429 without Retry-After")
	}

	// Anonymous tile reads: the address's own bucket.
	for range 5 {
		want(t, e.do("", "GET", e.logPrefix("acme")+"/tile/0/000.p/1", nil), 200, "")
	}
	want(t, e.do("", "GET", e.logPrefix("acme")+"/checkpoint", nil), 429, "rate_limited")
}
