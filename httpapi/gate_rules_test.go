package httpapi

import (
	"net/http"
	"testing"
)

// TestGateValueBackedOnlyByAHeldMemory pins the gate's eligibility helper
// on traced values (design rule 12): an account that occurs only in a
// memory retrieval would not return — an overwrite still waiting for the
// owner's confirmation, a superseded value — does not back a payment on
// its authority: the gate answers confirm, never allow; one found only in
// a retired memory is denied. The twins: the account in force, and the
// memory before its retirement, allow it.
func TestGateValueBackedOnlyByAHeldMemory(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env, _ func(testing.TB, string), _ backend) {
		alice := e.principal("acme", "alice", []string{"user"})
		harness := e.principal("acme", "harness", []string{"agent"}, "agent")
		rita := e.principal("acme", "rita", []string{"reviewer"})
		payee := func(body string, status int) string {
			r := e.do(alice, "POST", "/v1/memories", MemoryRequest{Namespace: "bank", Key: "payee_account", Class: "fact", Body: body, Channel: "user"})
			want(t, r, status, "")
			return r.json(t)["id"].(string)
		}
		gate := func(account string) string {
			t.Helper()
			r := e.do(harness, "POST", "/v1/gate", GateRequest{Action: "send_money", Args: map[string]any{"recipient": account}, Subject: "alice"})
			want(t, r, http.StatusOK, "")
			return r.json(t)["decision"].(string)
		}
		payee("ACCT-1042", http.StatusCreated)
		waiting := payee("ACCT-2000", http.StatusAccepted)
		if got := gate("ACCT-2000"); got != "confirm" {
			t.Errorf("payment to the account waiting for confirmation: %s, want confirm", got)
		}
		if got := gate("ACCT-1042"); got != "allow" {
			t.Errorf("payment to the account in force: %s, want allow", got)
		}
		want(t, e.do(alice, "POST", "/v1/memories/"+waiting+"/confirm", nil), http.StatusOK, "")
		if got := gate("ACCT-1042"); got != "confirm" {
			t.Errorf("payment to the superseded account: %s, want confirm", got)
		}
		if got := gate("ACCT-2000"); got != "allow" {
			t.Errorf("payment to the confirmed account: %s, want allow", got)
		}
		// A value found only in a retired memory is untrusted: deny, not
		// even confirm, whatever authority the memory once had.
		r := e.do(alice, "POST", "/v1/memories", MemoryRequest{Namespace: "bank", Class: "fact", Body: "the old landlord took ACCT-5555", Channel: "user"})
		want(t, r, http.StatusCreated, "")
		retired := r.json(t)["id"].(string)
		if got := gate("ACCT-5555"); got != "allow" {
			t.Errorf("payment to an account of an admitted user memory: %s, want allow", got)
		}
		want(t, e.do(rita, "POST", "/v1/memories/"+retired+"/retire", RetireRequest{Reason: "fraudulent landlord"}), http.StatusOK, "")
		if got := gate("ACCT-5555"); got != "deny" {
			t.Errorf("payment to an account found only in a retired memory: %s, want deny", got)
		}
	})
}
