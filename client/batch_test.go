package client_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/custody-mem/custody"
	"github.com/custody-mem/custody/client"
	"github.com/custody-mem/custody/httpapi"
)

// Batch returns the decisions in the order of the items; a bad item is an
// error naming it, and nothing of its batch is written.
func TestClientBatch(t *testing.T) {
	ctx := t.Context()
	url, principal := server(t)
	alice := client.New(url, principal("alice", []string{"user"}))
	ds, err := alice.Batch(ctx, httpapi.BatchRequest{Items: []httpapi.MemoryRequest{
		{Namespace: "n", Class: "fact", Body: "one", Channel: "user"},
		{Namespace: "n", Class: "procedure", Body: "two", Channel: "user"},
	}})
	if err != nil || len(ds) != 2 || ds[0].State != custody.StateAdmitted || ds[1].State != custody.StateQuarantined {
		t.Fatalf("Batch = %+v, %v; want admitted then quarantined", ds, err)
	}
	_, err = alice.Batch(ctx, httpapi.BatchRequest{Items: []httpapi.MemoryRequest{
		{Namespace: "n", Class: "fact", Body: "three", Channel: "user"},
		{Namespace: "n", Class: "fact", Body: "", Channel: "user"},
	}})
	var ce *client.Error
	if !errors.Is(err, custody.ErrInvalid) || !errors.As(err, &ce) || ce.Field != "items[1].body" {
		t.Fatalf("a batch with an empty body: %v; want invalid input naming items[1].body", err)
	}
	page, err := alice.List(ctx, client.ListOptions{Namespace: "n"})
	if err != nil || len(page.Items) != 1 || page.Items[0].Body != "one" {
		t.Fatalf("after the refused batch the namespace holds %+v, %v; want only the first admitted record", page, err)
	}
}

// BatchStates writes as Batch does and returns the states alone, in the
// order of the items; a bad item is the same error.
func TestClientBatchStates(t *testing.T) {
	ctx := t.Context()
	url, principal := server(t)
	alice := client.New(url, principal("alice", []string{"user"}))
	states, err := alice.BatchStates(ctx, httpapi.BatchRequest{Items: []httpapi.MemoryRequest{
		{Namespace: "n", Class: "procedure", Body: "two", Channel: "user"},
		{Namespace: "n", Class: "fact", Body: "one", Channel: "user"},
	}})
	if want := []custody.State{custody.StateQuarantined, custody.StateAdmitted}; err != nil || !slices.Equal(states, want) {
		t.Fatalf("BatchStates = %v, %v; want %v", states, err, want)
	}
	_, err = alice.BatchStates(ctx, httpapi.BatchRequest{Items: []httpapi.MemoryRequest{{Namespace: "n", Class: "fact", Body: "", Channel: "user"}}})
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Field != "items[0].body" {
		t.Fatalf("a batch with an empty body: %v; want invalid input naming items[0].body", err)
	}
	page, err := alice.List(ctx, client.ListOptions{Namespace: "n"})
	if err != nil || len(page.Items) != 1 || page.Items[0].Body != "one" {
		t.Fatalf("after BatchStates the namespace holds %+v, %v; want the admitted record", page, err)
	}
}
