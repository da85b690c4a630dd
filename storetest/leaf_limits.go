package storetest

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
)

// testLeafLimitsHTTP: every free-text field that enters a log entry is
// bounded where it comes in. A reason longer than custody.MaxReasonBytes
// is 400 naming the field and the limit on every route that takes one
// (delete, erase, retire, quarantine, approve, reject, confirm, pause,
// principal changes), and writes nothing; a reason of the limit passes (the twin).
// What has no bound of its own (a gate's justification ids, an
// observation's source) is refused once its entry would pass
// custody.MaxLeafBytes, naming the field. Afterwards every leaf fits an
// entry bundle and verify passes.
func testLeafLimitsHTTP(t *testing.T, a *apiEnv) {
	a.add("acme", "alice", []string{"user"})
	a.add("acme", "root", []string{"admin"})
	a.add("acme", "rita", []string{"reviewer"})
	a.add("acme", "mail", []string{"agent"}, "tool:email")
	a.add("acme", "bot", []string{"agent"}, "agent")
	huge := strings.Repeat("r", 70<<10)
	over := strings.Repeat("é", custody.MaxReasonBytes/2) + "!"
	atLimit := strings.Repeat("z", custody.MaxReasonBytes)
	fact := func(body string) string {
		return a.remember("alice", memoryRequest{Namespace: "n", Class: "fact", Body: body, Channel: "user"}, 201)
	}
	mailed := func(body string) string {
		return a.remember("mail", memoryRequest{Subject: "alice", Namespace: "n", Class: "fact", Body: body, Channel: "tool:email"}, 202)
	}
	size := func() uint64 {
		n, err := a.store.LogSize(a.ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	// refused sends the request with a reason too long, wants 400 naming
	// the field and its limit, and nothing written.
	refused := func(who, method, path string, body any, field string, limit int) {
		t.Helper()
		before := size()
		var eb struct {
			Error struct{ Code, Message, Field string }
		}
		a.call(who, method, path, body, 400, &eb)
		if eb.Error.Code != "invalid_input" || eb.Error.Field != field || !strings.Contains(eb.Error.Message, fmt.Sprint(limit)) {
			t.Errorf("%s %s: %+v; want invalid_input naming %s and the limit %d", method, path[:min(len(path), 60)], eb.Error, field, limit)
		}
		if after := size(); after != before {
			t.Errorf("%s %s was refused but the log grew from %d to %d entries", method, path[:min(len(path), 60)], before, after)
		}
	}
	reasonBody := func(r string) map[string]any { return map[string]any{"reason": r} }

	// The owner's delete, with the reason in the query (the report's case).
	gone := fact("an old note")
	refused("alice", "DELETE", "/v1/memories/"+gone+"?reason="+url.QueryEscape(huge), nil, "reason", custody.MaxReasonBytes)
	refused("alice", "DELETE", "/v1/memories/"+gone+"?erase=true&reason="+url.QueryEscape(over), nil, "reason", custody.MaxReasonBytes)
	a.call("alice", "DELETE", "/v1/memories/"+gone+"?reason="+url.QueryEscape(atLimit), nil, 200, nil)
	a.call("alice", "DELETE", "/v1/memories/"+gone+"?erase=true&reason=mine", nil, 200, nil)

	// Repairs and review.
	for _, op := range []string{"retire", "quarantine"} {
		id := fact("a note to " + op)
		refused("rita", "POST", "/v1/memories/"+id+"/"+op, reasonBody(over), "reason", custody.MaxReasonBytes)
		a.call("rita", "POST", "/v1/memories/"+id+"/"+op, reasonBody(atLimit), 200, nil)
	}
	for _, op := range []string{"approve", "reject"} {
		id := mailed("a mailed note to " + op)
		refused("rita", "POST", "/v1/review/"+id+"/"+op, reasonBody(huge), "reason", custody.MaxReasonBytes)
		a.call("rita", "POST", "/v1/review/"+id+"/"+op, reasonBody("checked with the sender"), 200, nil)
	}

	// The owner's confirmation of a sensitive overwrite.
	a.remember("alice", memoryRequest{Namespace: "bank", Key: "payee_account", Class: "fact", Body: "ACCT-1", Channel: "user"}, 201)
	waiting := a.remember("alice", memoryRequest{Namespace: "bank", Key: "payee_account", Class: "fact", Body: "ACCT-2", Channel: "user"}, 202)
	refused("alice", "POST", "/v1/memories/"+waiting+"/confirm", reasonBody(over), "reason", custody.MaxReasonBytes)
	a.call("alice", "POST", "/v1/memories/"+waiting+"/confirm", reasonBody(atLimit), 200, nil)

	// A pause's reason goes into the receipt of every candidate it holds.
	refused("rita", "POST", "/v1/pauses", map[string]any{"channel": "tool:email", "reason": over}, "reason", custody.MaxReasonBytes)
	var p struct{ ID string }
	a.call("rita", "POST", "/v1/pauses", map[string]any{"channel": "tool:email", "reason": atLimit}, 201, &p)
	if id := mailed("held while paused"); a.record("acme", id).State != custody.StateQuarantined {
		t.Errorf("a write during the pause is not held")
	}
	a.call("rita", "DELETE", "/v1/pauses/"+p.ID, nil, 200, nil)

	// Principal changes and a subject's erasure.
	refused("root", "PATCH", "/v1/principals/bot", map[string]any{"roles": []string{"agent"}, "channels": []string{"agent", "tool:web"}, "reason": over}, "reason", custody.MaxReasonBytes)
	a.call("root", "PATCH", "/v1/principals/bot", map[string]any{"roles": []string{"agent"}, "channels": []string{"agent", "tool:web"}, "reason": "web access"}, 200, nil)
	refused("root", "POST", "/v1/principals/bot/rotate", reasonBody(over), "reason", custody.MaxReasonBytes)
	refused("root", "POST", "/v1/principals/bot/revoke", reasonBody(huge), "reason", custody.MaxReasonBytes)
	a.call("root", "POST", "/v1/principals/bot/revoke", reasonBody(atLimit), 200, nil)
	refused("root", "POST", "/v1/subjects/alice/erase", reasonBody(over), "reason", custody.MaxReasonBytes)

	// No bound of its own: refused once the entry would not fit.
	ids := make([]string, 100)
	for i := range ids {
		ids[i] = fmt.Sprintf("%03d%s", i, strings.Repeat("j", 700))
	}
	refused("alice", "POST", "/v1/gate", map[string]any{"action": "files.write", "args": map[string]any{"path": "notes.txt"}, "justification": ids}, "justification", custody.MaxLeafBytes)
	kept := fact("a normal justification")
	var d custody.GateDecision
	a.call("alice", "POST", "/v1/gate", map[string]any{"action": "files.write", "args": map[string]any{"path": "notes.txt"}, "justification": []string{kept}}, 200, &d)
	if d.LogIndex == 0 {
		t.Errorf("the gate with a normal justification: %+v", d)
	}
	var sess struct{ ID string }
	a.add("acme", "harness", []string{"agent"}, "agent", "tool:web")
	a.call("harness", "POST", "/v1/sessions", map[string]any{"subject": "alice"}, 201, &sess)
	obs := "/v1/sessions/" + sess.ID + "/observations?subject=alice"
	refused("harness", "POST", obs, map[string]any{"channel": "tool:web", "text": "a page", "source_ref": huge}, "source_ref", custody.MaxLeafBytes)
	a.call("harness", "POST", obs, map[string]any{"channel": "tool:web", "text": "a page", "source_ref": "https://example.com/page"}, 200, nil)

	a.call("root", "POST", "/v1/subjects/alice/erase", reasonBody(atLimit), 200, nil)
	n := size()
	leaves, err := a.store.Leaves(a.ctx, "acme", 0, n)
	if err != nil {
		t.Fatal(err)
	}
	longest := 0
	for _, l := range leaves {
		longest = max(longest, len(l.Data))
		if len(l.Data) > custody.MaxLeafBytes {
			t.Errorf("entry %d is %d bytes, more than an entry bundle holds", l.Index, len(l.Data))
		}
	}
	if longest < custody.MaxReasonBytes {
		t.Errorf("the longest entry is %d bytes: the reasons at the limit were not logged, so the bound was not exercised", longest)
	}
	rep, err := a.svc.Verify(a.ctx, custody.VerifyOptions{})
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	for _, l := range rep.Logs {
		if len(l.Oversize) != 0 {
			t.Errorf("verify lists oversize entries %v of %s", l.Oversize, l.Tenant)
		}
	}
}
