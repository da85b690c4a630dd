package storetest

import (
	"bytes"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
)

// Through the API: DELETE /v1/memories/{id} retires by default and erases
// with erase=true, for the owner alone; POST /v1/subjects/{name}/erase
// answers with the receipt of what it erased. Afterwards neither search,
// the gate's tracing, an export nor the owner's log entries hold the
// body, and the log keeps each record's erase entry, readable by its
// owner.
func testForgetHTTP(t *testing.T, a *apiEnv) {
	a.add("acme", "alice", []string{"user"})
	a.add("acme", "bob", []string{"user"})
	a.add("acme", "root", []string{"admin"})
	a.add("acme", "harness", []string{"agent"}, "agent", "tool:email")
	fact := func(who, body string) string {
		return a.remember(who, memoryRequest{Namespace: "n", Class: "fact", Body: body, Channel: "user"}, 201)
	}
	old := fact("alice", "alice lives at 12 Elm")
	pin := fact("alice", "alice card ACCT-55501")
	other := fact("alice", "alice likes tea")
	bobs := fact("bob", "bob card ACCT-55501")
	mailed := a.remember("harness", memoryRequest{Subject: "alice", Namespace: "n", Class: "fact", Body: "new payee ACCT-55501", Channel: "tool:email"}, 202)

	a.call("harness", "DELETE", "/v1/memories/"+pin+"?subject=alice", nil, 403, nil)
	a.call("bob", "DELETE", "/v1/memories/"+pin, nil, 404, nil)
	a.call("alice", "DELETE", "/v1/memories/"+pin+"?erase=maybe", nil, 400, nil)
	var aff struct{ Affected []string }
	a.call("alice", "DELETE", "/v1/memories/"+old, nil, 200, &aff)
	if len(aff.Affected) != 1 || aff.Affected[0] != old {
		t.Fatalf("retire answered %v", aff.Affected)
	}
	a.call("alice", "GET", "/v1/memories/"+old, nil, 404, nil)
	if r := a.record("acme", old); r.State != custody.StateRetired || r.Erased || r.Body == "" {
		t.Errorf("the retired record: %+v; want retired, body kept", r)
	}
	a.call("alice", "DELETE", "/v1/memories/"+pin+"?erase=true&reason=mine", nil, 200, nil)
	a.call("alice", "DELETE", "/v1/memories/"+pin+"?erase=true", nil, 409, nil)
	// With alice's own record of the payee gone, the gate traces it to
	// the e-mail's record (tool:email).
	gateCites := func() bool {
		var d custody.GateDecision
		a.call("alice", "POST", "/v1/gate", map[string]any{"action": "payments.send", "args": map[string]any{"to": "ACCT-55501"}}, 200, &d)
		return strings.Contains(strings.Join(d.Reasons, " "), "tool:email")
	}
	if !gateCites() {
		t.Fatal("the gate does not trace the payee to the e-mail before the erasure: the check after it would prove nothing")
	}
	search := func(who string) string {
		return string(a.call(who, "POST", "/v1/search", map[string]any{"query": "ACCT-55501"}, 200, nil))
	}
	if s := search("alice"); strings.Contains(s, pin) || strings.Contains(s, "ACCT-55501") {
		t.Errorf("alice's search after the erasure: %s", s)
	}
	if s := search("bob"); !strings.Contains(s, bobs) {
		t.Errorf("bob's search, untouched: %s", s)
	}

	a.call("bob", "POST", "/v1/subjects/alice/erase", nil, 403, nil)
	a.call("root", "POST", "/v1/subjects/nobody/erase", nil, 404, nil)
	var rc custody.ErasureReceipt
	a.call("root", "POST", "/v1/subjects/alice/erase", map[string]any{"reason": "request 7"}, 200, &rc)
	var ids []string
	for _, r := range rc.Erased {
		ids = append(ids, r.ID)
	}
	if !sameSet(ids, []string{old, other, mailed}) || rc.AlreadyErased != 1 || rc.Subject != "alice" {
		t.Fatalf("the erasure receipt: %+v; want %s, %s and %s erased, one before", rc, old, other, mailed)
	}
	if gateCites() {
		t.Error("the gate still traces the payee to the erased e-mail")
	}
	var snap bytes.Buffer
	if _, err := a.svc.Export(a.ctx, "acme", &snap); err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{"12 Elm", "alice card", "likes tea"} {
		if strings.Contains(snap.String(), body) {
			t.Errorf("the export after the erasure holds %q", body)
		}
	}
	if !strings.Contains(snap.String(), "bob card ACCT-55501") {
		t.Error("the export lost bob's record")
	}
	// The log keeps each erasure, readable by the owner, without the body.
	es, raw := a.entries("alice", a.checkpoint("alice").Size)
	erased := 0
	for _, le := range es {
		if le.Transition == "erase" && le.Details["erased"] == "true" {
			erased++
		}
	}
	if erased != 4 || !strings.Contains(raw, `"transition":"erasure"`) || strings.Contains(raw, "alice card") || strings.Contains(raw, "new payee") {
		t.Errorf("alice's log view: %d erase entries (want 4), erasure entry present: %v", erased, strings.Contains(raw, `"transition":"erasure"`))
	}
	if _, braw := a.entries("bob", a.checkpoint("bob").Size); strings.Contains(braw, `"transition":"erasure"`) {
		t.Error("bob reads alice's erasure entry")
	}
	a.verify()
}
