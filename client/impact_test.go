package client_test

import (
	"context"
	"errors"
	"testing"

	"github.com/custody-mem/custody"
	"github.com/custody-mem/custody/client"
	"github.com/custody-mem/custody/httpapi"
)

// The client reads in a session (get, list, search) and a reviewer's
// Impact names that session; a read in another's session is refused, and
// a user's Impact is not found.
func TestClientImpact(t *testing.T) {
	ctx := context.Background()
	url, principal := server(t)
	alice := client.New(url, principal("alice", []string{"user"}))
	harness := client.New(url, principal("harness", []string{"agent"}, "agent", "tool:email"))
	other := client.New(url, principal("other", []string{"agent"}, "agent"))
	rita := client.New(url, principal("rita", []string{"reviewer"}))

	d, err := harness.Remember(ctx, httpapi.MemoryRequest{Subject: "alice", Namespace: "mail", Class: "episode", Body: "pay ACCT-7 now", Channel: "tool:email"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := harness.OpenSession(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := harness.GetIn(ctx, d.ID, "alice", s.ID); err != nil {
		t.Fatalf("GetIn: %v", err)
	}
	if _, err := harness.ListIn(ctx, s.ID, client.ListOptions{Namespace: "mail", Subject: "alice"}); err != nil {
		t.Fatalf("ListIn: %v", err)
	}
	if _, err := harness.Search(ctx, httpapi.SearchRequest{Query: "ACCT-7", Subject: "alice", Session: s.ID}); err != nil {
		t.Fatalf("Search in a session: %v", err)
	}
	if _, err := other.GetIn(ctx, d.ID, "alice", s.ID); !errors.Is(err, custody.ErrForbidden) {
		t.Errorf("GetIn in another's session: %v, want forbidden", err)
	}
	imp, err := rita.Impact(ctx, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(imp.Sessions) != 1 || imp.Sessions[0].Session != s.ID || len(imp.Sessions[0].Via) != 3 || imp.Sessions[0].Reads != 3 {
		t.Errorf("Impact sessions = %+v; want %s by get, list and search, 3 reads", imp.Sessions, s.ID)
	}
	if _, err := alice.Impact(ctx, d.ID); !errors.Is(err, custody.ErrNotFound) {
		t.Errorf("a user's Impact: %v, want not found", err)
	}
}
