package storetest

import (
	"testing"
	"time"

	"github.com/custody-mem/custody"
)

// The review backlog counts quarantined candidates across tenants and
// names the oldest one's time; decisions take items out of it.
func testReviewBacklog(t *testing.T, e *env) {
	if n, oldest, err := e.svc.ReviewBacklog(e.ctx); err != nil || n != 0 || !oldest.IsZero() {
		t.Fatalf("empty backlog: %d, %s, %v; want 0 and the zero time", n, oldest, err)
	}
	e.user("acme", "alice")
	e.user("globex", "bob")
	acme := e.act(e.principal("acme", "harness", []string{"agent"}, []string{"tool:web"}, nil), "alice")
	globex := e.act(e.principal("globex", "harness", []string{"agent"}, []string{"tool:web"}, nil), "bob")
	rev := e.act(e.principal("acme", "rev", []string{"reviewer"}, nil, nil), "")
	first := e.clock.Now().UTC()
	a := e.remember(acme, custody.Candidate{Namespace: "web", Class: custody.ClassFact, Body: "claim one", Channel: "tool:web"})
	e.clock.Advance(time.Hour)
	e.remember(globex, custody.Candidate{Namespace: "web", Class: custody.ClassFact, Body: "claim two", Channel: "tool:web"})
	e.remember(acme, custody.Candidate{Namespace: "web", Class: custody.ClassEpisode, Body: "admitted, not held", Channel: "tool:web"})
	n, oldest, err := e.svc.ReviewBacklog(e.ctx)
	if err != nil || n != 2 || !oldest.Equal(first) {
		t.Fatalf("backlog: %d, oldest %s, %v; want 2, %s", n, oldest, err, first)
	}
	if _, err := e.svc.Reject(e.ctx, rev, a.ID, "made up"); err != nil {
		t.Fatal(err)
	}
	n, oldest, err = e.svc.ReviewBacklog(e.ctx)
	if err != nil || n != 1 || !oldest.Equal(first.Add(time.Hour)) {
		t.Fatalf("backlog after a rejection: %d, oldest %s, %v; want 1, %s", n, oldest, err, first.Add(time.Hour))
	}
}
