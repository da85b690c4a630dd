package client_test

import (
	"context"
	"errors"
	"testing"

	"github.com/custody-mem/custody"
	"github.com/custody-mem/custody/client"
	"github.com/custody-mem/custody/httpapi"
)

// ListOptions.NamespacePrefix reaches the server as namespace_prefix: the
// listing under work holds work and work/notes, not workshop; with
// Namespace as well it is refused.
func TestListNamespacePrefix(t *testing.T) {
	ctx := context.Background()
	url, principal := server(t)
	alice := client.New(url, principal("alice", []string{"user"}))
	for _, ns := range []string{"work", "work/notes", "workshop"} {
		if _, err := alice.Remember(ctx, httpapi.MemoryRequest{Namespace: ns, Class: "fact", Body: "ledger", Channel: "user"}); err != nil {
			t.Fatal(err)
		}
	}
	page, err := alice.List(ctx, client.ListOptions{NamespacePrefix: "work"})
	if err != nil || len(page.Items) != 2 {
		t.Fatalf("List under work = %+v, %v; want 2 records", page, err)
	}
	for _, r := range page.Items {
		if r.Namespace == "workshop" {
			t.Errorf("List under work returned %s in workshop", r.ID)
		}
	}
	if _, err := alice.List(ctx, client.ListOptions{Namespace: "work", NamespacePrefix: "work"}); !errors.Is(err, custody.ErrInvalid) {
		t.Errorf("List with namespace and namespace_prefix: %v; want invalid", err)
	}
}
