package tamper

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// testGrantTampering forges an owner's confirmation of an exact action in
// the grants table, and makes a spent one unused again: the gate decides
// on the table (an insider's edit is not prevented), so verify must name
// each. The twin: a confirmation given through the API allows the action
// once, the next identical call asks again, and verify passes.
func testGrantTampering(t *testing.T, b Backend) {
	pay := map[string]any{"action": "send_money", "args": map[string]any{"recipient": "ACCT-4471", "amount": "900"}}
	type gateAnswer struct {
		Decision      string   `json:"decision"`
		Reasons       []string `json:"reasons"`
		ConfirmDigest string   `json:"confirm_digest"`
	}
	setup := func(t *testing.T) (*tamperEnv, string, func() gateAnswer) {
		e := newTamperEnv(t, b)
		_, alice := e.add("alice", []string{"user"})
		gate := func() gateAnswer {
			t.Helper()
			a := e.do(alice, "POST", "/v1/gate", pay)
			var g gateAnswer
			if a.status != http.StatusOK || json.Unmarshal([]byte(a.body), &g) != nil {
				t.Fatalf("gate: %d %s", a.status, a.body)
			}
			return g
		}
		if g := gate(); g.Decision != "confirm" || g.ConfirmDigest == "" {
			t.Fatalf("gate before any confirmation = %+v; want confirm with a digest", g)
		}
		return e, alice, gate
	}
	t.Run("legitimate", func(t *testing.T) {
		e, alice, gate := setup(t)
		e.expect(e.do(alice, "POST", "/v1/gate/confirm", pay), http.StatusOK, "")
		if g := gate(); g.Decision != "allow" || !strings.Contains(strings.Join(g.Reasons, "; "), "confirmation is now used") {
			t.Fatalf("gate after the owner's confirmation = %+v; want allow", g)
		}
		if g := gate(); g.Decision != "confirm" {
			t.Fatalf("gate after the confirmation was spent = %+v; want confirm", g)
		}
		e.verify()
	})
	t.Run("forged", func(t *testing.T) {
		e, _, gate := setup(t)
		digest := gate().ConfirmDigest
		e.verify()
		e.exec(`INSERT INTO grants (id, tenant, subject, digest, actor, created_at) VALUES ('01JFORGED00000000000000000', 'acme', 'alice', '%s', 'acme/alice', 0)`, digest)
		e.verify("tenant acme, subject alice", digest, "holds 1 by acme/alice but the log records 0")
		if g := gate(); g.Decision != "allow" {
			t.Fatalf("gate after the forged row = %+v; the forgery is what verify must catch, so it must take effect here", g)
		}
		e.verify("holds 1 by acme/alice but the log records 0")
	})
	t.Run("reused", func(t *testing.T) {
		e, alice, gate := setup(t)
		e.expect(e.do(alice, "POST", "/v1/gate/confirm", pay), http.StatusOK, "")
		if g := gate(); g.Decision != "allow" {
			t.Fatalf("gate after the owner's confirmation = %+v; want allow", g)
		}
		e.verify()
		e.exec(`UPDATE grants SET used_at = NULL`)
		e.verify("spent 1 but the grants table marks 0 used")
		if g := gate(); g.Decision != "allow" {
			t.Fatalf("gate after the spent row was reset = %+v; the edit is what verify must catch, so it must take effect here", g)
		}
		e.verify("spent 2 but the grants table marks 1 used")
	})
	t.Run("deleted", func(t *testing.T) {
		e, alice, _ := setup(t)
		e.expect(e.do(alice, "POST", "/v1/gate/confirm", pay), http.StatusOK, "")
		e.verify()
		e.exec(`DELETE FROM grants`)
		e.verify("the log records 1 by acme/alice but the grants table holds 0")
	})
}
