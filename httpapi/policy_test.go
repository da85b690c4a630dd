package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/custody-mem/custody"
)

// brokenPolicy errors on every evaluation: the attribute does not exist.
const brokenPolicy = `permit (principal, action, resource) when { context.missing == 1 };`

// TestErroringPolicyIsRefused: PUT /v1/policy dry-runs a new policy on the
// tenant's recent candidates and refuses one that cannot be evaluated (400
// naming the record and the error), so the active policy stays and
// admission keeps working; with force=true it installs and candidates wait
// as pending (fail closed); a good policy installs without force and
// decides the pending ones.
func TestErroringPolicyIsRefused(t *testing.T) {
	e := newEnv(t, Options{RatePerSecond: -1})
	alice := e.principal("acme", "alice", []string{"user"})
	owner := e.principal("acme", "olga", []string{"user", "policy_owner"})
	note := MemoryRequest{Namespace: "n", Class: "fact", Body: "tea, no sugar", Channel: "user"}
	first := e.do(alice, "POST", "/v1/memories", note)
	want(t, first, http.StatusCreated, "")
	firstID := first.json(t)["id"].(string)
	active := e.do(owner, "GET", "/v1/policy", nil).json(t)["version"]

	r := e.do(owner, "PUT", "/v1/policy", PolicyRequest{Text: brokenPolicy})
	want(t, r, http.StatusBadRequest, "invalid_input")
	msg := r.json(t)["error"].(map[string]any)["message"].(string)
	for _, part := range []string{firstID, "missing", "force"} {
		if !strings.Contains(msg, part) {
			t.Errorf("refusal does not name %q: %s", part, msg)
		}
	}
	if got := e.do(owner, "GET", "/v1/policy", nil).json(t)["version"]; got != active {
		t.Fatalf("active policy %v after a refused change, want %v", got, active)
	}
	want(t, e.do(alice, "POST", "/v1/memories", note), http.StatusCreated, "")
	want(t, e.do(owner, "PUT", "/v1/policy?force=maybe", PolicyRequest{Text: brokenPolicy}), http.StatusBadRequest, "invalid_input")

	want(t, e.do(owner, "PUT", "/v1/policy?force=true", PolicyRequest{Text: brokenPolicy}), http.StatusOK, "")
	if got := e.do(owner, "GET", "/v1/policy", nil).json(t)["version"]; got != custody.PolicyVersion([]byte(brokenPolicy)) {
		t.Fatalf("forced policy not active: version %v", got)
	}
	stalled := e.do(alice, "POST", "/v1/memories", note)
	if stalled.status == http.StatusCreated || stalled.json(t)["state"] != string(custody.StatePending) {
		t.Fatalf("under the forced broken policy a write answered %d %s, want it pending", stalled.status, stalled.body)
	}
	pendingID := stalled.json(t)["id"].(string)

	// The twin: a policy that evaluates installs without force.
	fixed := e.do(owner, "PUT", "/v1/policy", PolicyRequest{Text: string(custody.DefaultPolicyText())})
	want(t, fixed, http.StatusOK, "")
	var change PolicyChangeResponse
	if err := json.Unmarshal(fixed.body, &change); err != nil || len(change.Changed) != 1 || change.Changed[0] != pendingID {
		t.Fatalf("the good policy did not decide the pending candidate %s: %s", pendingID, fixed.body)
	}
	want(t, e.do(alice, "POST", "/v1/memories", note), http.StatusCreated, "")
}

// TestErroringPolicyIsRefusedOnAnEmptyTenant: a tenant with no records yet
// is protected too: the dry run tries sample candidates of the caller.
func TestErroringPolicyIsRefusedOnAnEmptyTenant(t *testing.T) {
	e := newEnv(t, Options{RatePerSecond: -1})
	owner := e.principal("acme", "olga", []string{"user", "policy_owner"})
	// Errors only for procedures from a tool: found by the samples.
	narrow := `permit (principal, action, resource) when { context.class == "procedure" && context.channel_kind == "tool" && context.nope };`
	r := e.do(owner, "PUT", "/v1/policy", PolicyRequest{Text: narrow})
	want(t, r, http.StatusBadRequest, "invalid_input")
	if msg := r.String(); !strings.Contains(msg, "sample candidate") || !strings.Contains(msg, "class procedure") {
		t.Fatalf("refusal does not name the sample: %s", msg)
	}
	want(t, e.do(owner, "PUT", "/v1/policy", PolicyRequest{Text: string(custody.DefaultPolicyText())}), http.StatusOK, "")
}
