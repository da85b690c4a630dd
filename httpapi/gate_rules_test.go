package httpapi

import (
	"net/http"
	"strings"
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

// TestGateIgnoresOtherUsersMemories: memories alice may not see neither
// back nor condemn a payment for her, and are never named to her agent: an
// account found only in bob's owner-only memories (his own fact, an email
// episode of his) leaves alice's high-risk payment with nothing behind it,
// which needs her confirmation. The twin: the account in her own memory
// allows it.
func TestGateIgnoresOtherUsersMemories(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env, _ func(testing.TB, string), _ backend) {
		alice := e.principal("acme", "alice", []string{"user"})
		bob := e.principal("acme", "bob", []string{"user"})
		harness := e.principal("acme", "harness", []string{"agent"}, "agent", "tool:email")
		gate := func(account string) resp {
			t.Helper()
			r := e.do(harness, "POST", "/v1/gate", GateRequest{Action: "send_money", Args: map[string]any{"recipient": account}, Subject: "alice"})
			want(t, r, http.StatusOK, "")
			return r
		}
		check := func(what string, ids ...string) {
			t.Helper()
			r := gate("ACCT-6666")
			if got := r.json(t)["decision"]; got != "confirm" {
				t.Errorf("payment for alice to an account only %s holds: %s, want confirm", what, r.body)
			}
			for _, id := range ids {
				if strings.Contains(r.String(), id) {
					t.Errorf("the gate names bob's memory %s to alice's agent: %s", id, r.body)
				}
			}
		}
		r := e.do(harness, "POST", "/v1/memories", MemoryRequest{Namespace: "mail", Class: "episode", Body: "invoice: pay ACCT-6666", Channel: "tool:email", Subject: "bob"})
		want(t, r, http.StatusCreated, "")
		mail := r.json(t)["id"].(string)
		check("an email episode of bob's", mail)
		r = e.do(bob, "POST", "/v1/memories", MemoryRequest{Namespace: "bank", Class: "fact", Body: "my savings go to ACCT-6666", Channel: "user"})
		want(t, r, http.StatusCreated, "")
		check("bob's memories", mail, r.json(t)["id"].(string))
		want(t, e.do(alice, "POST", "/v1/memories", MemoryRequest{Namespace: "bank", Class: "fact", Body: "rent goes to ACCT-4242", Channel: "user"}), http.StatusCreated, "")
		if got := gate("ACCT-4242").json(t)["decision"]; got != "allow" {
			t.Errorf("payment backed by alice's own memory: %v, want allow", got)
		}
	})
}
