package storetest

import (
	"testing"

	custody "github.com/custody-mem/custody"
)

// A batch's keys are decided as if its candidates came one at a time,
// whether the store reads them one by one or all at once ahead of the
// batch (custody.KeysReader): an overwrite of a sensitive key that
// exists waits for confirmation while the key's first write elsewhere is
// admitted, a key with versions takes the next, a key twice in the batch
// takes two in a row, and the same key in another namespace is a key of
// its own.
func testRememberBatchKeys(t *testing.T, e *env) {
	alice := e.user("acme", "alice")
	keyed := func(ns, key, body string) custody.Candidate {
		return custody.Candidate{Namespace: ns, Key: key, Class: custody.ClassFact, Body: body, Channel: custody.ChannelUser}
	}
	tz := e.remember(alice, keyed("keys", "tz", "Europe/Paris"))
	payee := e.remember(alice, keyed("keys", "payee_account", "ACCT-1042"))
	if tz.State != custody.StateAdmitted || payee.State != custody.StateAdmitted {
		t.Fatalf("first versions: tz %s, payee %s", tz.State, payee.State)
	}

	ds, err := e.svc.RememberBatch(e.ctx, alice, []custody.Candidate{
		keyed("keys", "tz", "Europe/Berlin"),
		keyed("keys", "payee_account", "ACCT-7777"),
		keyed("other", "payee_account", "ACCT-5000"),
		keyed("keys", "twice", "first"),
		keyed("keys", "twice", "second"),
		keyed("other", "tz", "Asia/Tokyo"),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		state   custody.State
		version int
	}{
		{custody.StateAdmitted, 2},
		{custody.StatePendingConfirmation, 2}, // an overwrite of the payee
		{custody.StateAdmitted, 1},            // the payee's first write in its namespace
		{custody.StateAdmitted, 1},
		{custody.StateAdmitted, 2},
		{custody.StateAdmitted, 1},
	}
	for i, d := range ds {
		if d.State != want[i].state || d.Record.Version != want[i].version {
			t.Errorf("item %d: %s version %d (%s), want %s version %d", i, d.State, d.Record.Version, d.Reason, want[i].state, want[i].version)
		}
	}
	current := func(ns, key string) string {
		t.Helper()
		var id string
		e.view(func(tx custody.Tx) (err error) {
			id, err = tx.CurrentID(e.ctx, "acme", "alice", ns, key)
			return err
		})
		return id
	}
	for _, c := range []struct{ ns, key, want string }{
		{"keys", "tz", ds[0].ID},
		{"keys", "payee_account", payee.ID}, // in force until confirmed
		{"other", "payee_account", ds[2].ID},
		{"keys", "twice", ds[4].ID},
		{"other", "tz", ds[5].ID},
	} {
		if got := current(c.ns, c.key); got != c.want {
			t.Errorf("%s/%s in force: %s, want %s", c.ns, c.key, got, c.want)
		}
	}
	e.verify()
}
