package httpapi

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/custody-mem/custody"
)

// logSize is the store's log size.
func (e *env) logSize() uint64 {
	e.t.Helper()
	n, err := e.store.LogSize(e.ctx, "acme")
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// A batch of admitted, quarantined and pending_confirmation candidates
// answers one decision per item, in order, each with its own receipt and
// log entry, and the store verifies after it.
func TestBatchMixed(t *testing.T) {
	e := newEnv(t, Options{})
	alice := e.principal("acme", "alice", []string{"user"})
	start := e.logSize()
	items := []MemoryRequest{
		{Namespace: "n", Class: "fact", Body: "tea at five", Channel: "user"},
		{Namespace: "n", Class: "procedure", Body: "always wire the money at once", Channel: "user"},
		{Namespace: "bank", Key: "payee_account", Class: "fact", Body: "ACCT-1042", Channel: "user"},
		{Namespace: "bank", Key: "payee_account", Class: "fact", Body: "ACCT-2000", Channel: "user"},
	}
	r := e.do(alice, "POST", "/v1/memories/batch", BatchRequest{Items: items})
	want(t, r, 200, "")
	var got BatchResponse
	if err := json.Unmarshal(r.body, &got); err != nil {
		t.Fatal(err)
	}
	states := []custody.State{custody.StateAdmitted, custody.StateQuarantined, custody.StateAdmitted, custody.StatePendingConfirmation}
	if len(got.Items) != len(states) {
		t.Fatalf("%d decisions for %d items: %s", len(got.Items), len(states), r.body)
	}
	entries := e.do(alice, "GET", fmt.Sprintf("/v1/log/entries?start=%d&end=%d", start, start+4), nil)
	want(t, entries, 200, "")
	var log LogEntriesResponse
	if err := json.Unmarshal(entries.body, &log); err != nil {
		t.Fatal(err)
	}
	if len(log.Entries) != 4 {
		t.Fatalf("%d log entries after a batch of 4", len(log.Entries))
	}
	for i, d := range got.Items {
		if d.State != states[i] || d.Receipt == nil || d.Receipt.LogIndex != d.LogIndex || d.LogIndex != start+uint64(i) {
			t.Errorf("item %d: %s at %d, receipt %+v; want %s at %d", i, d.State, d.LogIndex, d.Receipt, states[i], start+uint64(i))
		}
		if le := log.Entries[i]; le.RecordID != d.ID || le.Transition != "admission" || le.NewState != string(states[i]) {
			t.Errorf("item %d: log entry %+v, want the admission of %s as %s", i, le, d.ID, states[i])
		}
	}
	if _, err := e.svc.Verify(e.ctx, custody.VerifyOptions{}); err != nil {
		t.Fatalf("verify after a batch: %v", err)
	}
}

// One bad item refuses the whole batch with the item's index, and nothing
// is written; the same batch with the item mended is taken.
func TestBatchRefusedWhole(t *testing.T) {
	e := newEnv(t, Options{})
	alice := e.principal("acme", "alice", []string{"user"})
	good := `{"namespace":"n","class":"fact","body":"fine","channel":"user"}`
	batch := func(items ...string) string { return `{"items":[` + strings.Join(items, ",") + `]}` }
	for _, tc := range []struct {
		name, body    string
		status        int
		code, field   string
		messagePrefix string
	}{
		{"invalid namespace", batch(good, good, good, `{"namespace":"no spaces","class":"fact","body":"x","channel":"user"}`), 400, "invalid_input", "items[3].namespace", "items[3].namespace: "},
		{"unknown field", batch(good, `{"namespace":"n","class":"fact","body":"x","channel":"user","state":"admitted"}`), 400, "unknown_field", "items[1].state", "items[1].state: "},
		{"wrong type", batch(`{"namespace":"n","class":5,"body":"x","channel":"user"}`), 400, "invalid_json", "items[0].class", "items[0].class: "},
		{"bad expiry", batch(good, `{"namespace":"n","class":"fact","body":"x","channel":"user","expires_at":"soon"}`), 400, "invalid_input", "items[1].expires_at", "items[1].expires_at: "},
		{"empty body", batch(good, `{"namespace":"n","class":"fact","body":"","channel":"user"}`), 400, "invalid_input", "items[1].body", "items[1].body: "},
		{"another subject", batch(`{"namespace":"n","class":"fact","body":"x","channel":"user","subject":"bob"}`), 400, "invalid_input", "items[0].subject", "items[0].subject: "},
		{"forbidden channel", batch(good, `{"namespace":"n","class":"fact","body":"x","channel":"tool:email"}`), 403, "forbidden", "items[1]", "items[1]: "},
		{"missing parent", batch(good, `{"namespace":"n","class":"fact","body":"x","channel":"user","derived_from":[{"id":"`+absentID+`","weight":1}]}`), 404, "not_found", "", ""},
		{"no items", `{"items":[]}`, 400, "invalid_input", "items", ""},
		// The body is checked as it arrives: the first problem is the one
		// named. An item's subject is checked as it arrives when the batch's
		// is known by then (the body gave it first, or ?subject=), else once
		// the body has ended.
		{"another subject before an item that does not decode", `{"subject":"alice","items":[` + good + `,{"namespace":"n","class":"fact","body":"x","channel":"user","subject":"bob"},{"namespace":"n","class":5}]}`, 400, "invalid_input", "items[1].subject", "items[1].subject: "},
		{"an item that does not decode before the batch's subject", `{"items":[` + good + `,{"namespace":"n","class":"fact","body":"x","channel":"user","subject":"bob"},{"namespace":"n","class":5}],"subject":"alice"}`, 400, "invalid_json", "items[2].class", "items[2].class: "},
		{"another subject than the batch's given last", `{"items":[` + good + `,{"namespace":"n","class":"fact","body":"x","channel":"user","subject":"bob"}],"subject":"alice"}`, 400, "invalid_input", "items[1].subject", "items[1].subject: "},
		{"a field given twice", `{"items":[` + good + `],"ITEMS":[` + good + `]}`, 400, "invalid_json", "items", `field "items" appears twice`},
		{"an item larger than one write", batch(good, `{"namespace":"n","class":"fact","channel":"user","body":"`+strings.Repeat("x", int(DefaultMaxBodyBytes))+`"}`, good), 413, "body_too_large", "items[1]", "items[1] is larger than the limit of one write"},
		{"too many, one not decoding", batch(append(strings.Split(strings.Repeat(good+"\n", custody.MaxBatch), "\n")[:custody.MaxBatch], `{"class":5}`)...), 400, "invalid_input", "items", "a batch holds at most 1000 items"},
		{"not an object", `{"items":[` + good + `],"extra":1}`, 400, "unknown_field", "extra", ""},
		{"too many", batch(strings.Split(strings.Repeat(good+"\n", custody.MaxBatch+1), "\n")[:custody.MaxBatch+1]...), 400, "invalid_input", "items", "a batch holds at most 1000 items"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			size, n := e.logSize(), e.count("acme")
			r := e.do(alice, "POST", "/v1/memories/batch", tc.body)
			want(t, r, tc.status, tc.code)
			var b ErrorBody
			if err := json.Unmarshal(r.body, &b); err != nil {
				t.Fatal(err)
			}
			if b.Error.Field != tc.field || !strings.HasPrefix(b.Error.Message, tc.messagePrefix) {
				t.Errorf("error %+v; want field %q and a message starting %q", b.Error, tc.field, tc.messagePrefix)
			}
			if e.logSize() != size || e.count("acme") != n {
				t.Errorf("a refused batch wrote: log %d -> %d, records %d -> %d", size, e.logSize(), n, e.count("acme"))
			}
		})
	}
	// The positive twin: the largest batch, all good, is taken whole.
	size, n := e.logSize(), e.count("acme")
	r := e.do(alice, "POST", "/v1/memories/batch", batch(strings.Split(strings.Repeat(good+"\n", custody.MaxBatch), "\n")[:custody.MaxBatch]...))
	want(t, r, 200, "")
	if e.logSize() != size+custody.MaxBatch || e.count("acme") != n+custody.MaxBatch {
		t.Errorf("a batch of %d: log %d -> %d, records %d -> %d", custody.MaxBatch, size, e.logSize(), n, e.count("acme"))
	}
}

// An agent's batch is for the subject it names, once for the batch.
func TestBatchForSubject(t *testing.T) {
	e := newEnv(t, Options{})
	e.principal("acme", "alice", []string{"user"})
	harness := e.principal("acme", "harness", []string{"agent"}, "agent", "tool:email")
	item := MemoryRequest{Namespace: "n", Class: "episode", Body: "met at the cafe", Channel: "tool:email"}
	want(t, e.do(harness, "POST", "/v1/memories/batch", BatchRequest{Items: []MemoryRequest{item}}), 400, "invalid_input")
	want(t, e.do(harness, "POST", "/v1/memories/batch", BatchRequest{Subject: "mallory", Items: []MemoryRequest{item}}), 403, "subject_not_allowed")
	r := e.do(harness, "POST", "/v1/memories/batch", BatchRequest{Subject: "alice", Items: []MemoryRequest{item, item}})
	want(t, r, 200, "")
	var got BatchResponse
	if err := json.Unmarshal(r.body, &got); err != nil {
		t.Fatal(err)
	}
	for i, d := range got.Items {
		if d.Record != nil || d.State != custody.StateAdmitted || d.Authority != custody.AuthorityExternal {
			t.Errorf("item %d: %+v", i, d)
		}
	}
	if n := e.count("acme"); n != 2 {
		t.Errorf("%d records after a batch of 2", n)
	}
	// The subject may come as ?subject=, and an item may repeat it.
	item.Subject = "alice"
	want(t, e.do(harness, "POST", "/v1/memories/batch?subject=alice", BatchRequest{Items: []MemoryRequest{item}}), 200, "")
	want(t, e.do(harness, "POST", "/v1/memories/batch?subject=alice", BatchRequest{Subject: "bob", Items: []MemoryRequest{item}}), 400, "invalid_input")
}
