package storetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
)

// A batch decides each candidate on its own, in one transaction: its own
// state, receipt and log entry, in the order given; a later candidate sees
// the earlier ones (an overwrite of a sensitive key written just before
// waits for confirmation). A candidate that is invalid, forbidden or names
// a missing parent refuses the whole batch, naming its index, and nothing
// is written.
func testRememberBatch(t *testing.T, e *env) {
	alice := e.user("acme", "alice")
	logSize := func() uint64 {
		t.Helper()
		n, err := e.store.LogSize(e.ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	records := func() int {
		t.Helper()
		n := 0
		e.view(func(tx custody.Tx) error {
			return tx.ScanRecords(e.ctx, "acme", func(*custody.Record) error { n++; return nil })
		})
		return n
	}
	fact := func(body string) custody.Candidate {
		return custody.Candidate{Namespace: "batch", Class: custody.ClassFact, Body: body, Channel: custody.ChannelUser}
	}
	payee := func(body string) custody.Candidate {
		c := fact(body)
		c.Key = "payee_account"
		return c
	}
	procedure := fact("always wire the money at once")
	procedure.Class = custody.ClassProcedure

	size0 := logSize()
	ds, err := e.svc.RememberBatch(e.ctx, alice, []custody.Candidate{fact("tea at five"), procedure, payee("ACCT-1042"), payee("ACCT-2000")})
	if err != nil {
		t.Fatalf("a valid batch: %v", err)
	}
	wantStates := []custody.State{custody.StateAdmitted, custody.StateQuarantined, custody.StateAdmitted, custody.StatePendingConfirmation}
	if len(ds) != len(wantStates) {
		t.Fatalf("%d decisions for 4 candidates", len(ds))
	}
	for i, d := range ds {
		if d.State != wantStates[i] {
			t.Errorf("item %d: %s (%s), want %s", i, d.State, d.Reason, wantStates[i])
		}
		if d.Receipt == nil || d.Receipt.LogIndex != d.LogIndex || d.LogIndex != size0+uint64(i) {
			t.Errorf("item %d: log index %d, receipt %+v; want its own entry %d", i, d.LogIndex, d.Receipt, size0+uint64(i))
		}
		if r := e.record("acme", d.ID); r.State != d.State || r.LogIndex != d.LogIndex || r.Owner != "alice" {
			t.Errorf("item %d stored as %+v", i, r)
		}
	}
	if got := logSize(); got != size0+4 {
		t.Errorf("log size %d after a batch of 4, want %d", got, size0+4)
	}
	e.verify()

	// Decided ahead against the key's versions before the batch (2, as
	// the writer last saw them), the second of these is decided again in
	// the transaction, after the first took version 3: it is version 4,
	// and its log entry says so.
	ds, err = e.svc.RememberBatch(e.ctx, alice, []custody.Candidate{payee("ACCT-3000"), payee("ACCT-4000")})
	if err != nil {
		t.Fatalf("a batch of two versions of one key: %v", err)
	}
	for i, d := range ds {
		if d.State != custody.StatePendingConfirmation || d.Record.Version != 3+i {
			t.Errorf("version item %d: %s version %d, want pending_confirmation version %d", i, d.State, d.Record.Version, 3+i)
		}
		es, err := e.svc.LogEntries(e.ctx, alice, d.LogIndex, d.LogIndex+1)
		if err != nil || len(es) != 1 || es[0].Entry == nil {
			t.Fatalf("entry of version item %d: %v", i, err)
		}
		if en := es[0].Entry; en.RecordID != d.ID || en.Details["version"] != fmt.Sprint(3+i) || en.NewState != string(d.State) {
			t.Errorf("entry of version item %d: %s %s version %s", i, en.RecordID, en.NewState, en.Details["version"])
		}
	}
	e.verify()

	size1, n1 := logSize(), records()
	missing := fact("derived from nothing")
	missing.DerivedFrom = []custody.Edge{{ID: "01ARZ3NDEKTSV4RRFFQ69G5FAV", Weight: 1}}
	badNS := fact("bad namespace")
	badNS.Namespace = "no spaces allowed"
	for _, tc := range []struct {
		name  string
		items []custody.Candidate
		kind  error
		field string
	}{
		{"invalid namespace", []custody.Candidate{fact("first"), badNS, fact("third")}, custody.ErrInvalid, "items[1].namespace"},
		{"forbidden channel", []custody.Candidate{fact("first"), {Namespace: "batch", Class: custody.ClassFact, Body: "x", Channel: "tool:email"}}, custody.ErrForbidden, "items[1]"},
		{"missing parent", []custody.Candidate{fact("first"), fact("second"), missing}, custody.ErrNotFound, ""},
		{"empty", nil, custody.ErrInvalid, "items"},
		{"too many", make([]custody.Candidate, custody.MaxBatch+1), custody.ErrInvalid, "items"},
	} {
		_, err := e.svc.RememberBatch(e.ctx, alice, tc.items)
		var ce *custody.Error
		if !errors.Is(err, tc.kind) || (tc.field != "" && (!errors.As(err, &ce) || ce.Field != tc.field)) {
			t.Errorf("%s: %v, want %v naming %q", tc.name, err, tc.kind, tc.field)
		}
		if strings.HasPrefix(tc.field, "items[") && ce != nil && !strings.HasPrefix(ce.Msg, tc.field+": ") {
			t.Errorf("%s: message %q does not start with %s", tc.name, ce.Msg, tc.field)
		}
		if got, want := fmt.Sprint(logSize(), "/", records()), fmt.Sprint(size1, "/", n1); got != want {
			t.Errorf("%s: log size/records %s after a refused batch, want %s", tc.name, got, want)
		}
	}
	e.verify()
}
