package tamper

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// testPauseHTTP pauses a channel through the API: the channel's fact is
// quarantined with the pause in its receipt, and after the resume the same
// write is decided as before. An insider who deletes or resumes the pause
// in the database is named by verify.
func testPauseHTTP(t *testing.T, b Backend) {
	e := newTamperEnv(t, b)
	_, rita := e.add("rita", []string{"reviewer"})
	_, bob := e.add("bob", []string{"user"})
	e.add("alice", []string{"user"})
	_, mail := e.add("mail", []string{"agent"}, "agent", "tool:email")
	note := map[string]any{"subject": "alice", "namespace": "n", "class": "episode", "body": "an email arrived", "channel": "tool:email"}
	decide := func() (int, string, []string, string) {
		a := e.do(mail, "POST", "/v1/memories", note)
		var d struct {
			State, Reason string
			Receipt       struct{ Rules []string }
		}
		json.Unmarshal([]byte(a.body), &d)
		return a.status, d.State, d.Receipt.Rules, d.Reason
	}
	st0, state0, rules0, _ := decide()
	if state0 == "quarantined" && strings.Contains(strings.Join(rules0, ","), "pause:") {
		t.Fatalf("the email before any pause names a pause: %v", rules0)
	}

	e.expect(e.do(bob, "POST", "/v1/pauses", map[string]any{"channel": "tool:email", "reason": "x"}), http.StatusForbidden, "forbidden")
	e.expect(e.do(rita, "POST", "/v1/pauses", map[string]any{"channel": "tool:email", "for": "soon", "reason": "x"}), http.StatusBadRequest, "invalid_input")
	a := e.do(rita, "POST", "/v1/pauses", map[string]any{"channel": "tool:email", "for": "2h", "reason": "phishing wave"})
	e.expect(a, http.StatusCreated, "")
	var p struct{ ID string }
	json.Unmarshal([]byte(a.body), &p)
	st, state, rules, reason := decide()
	if st != http.StatusAccepted || state != "quarantined" || !strings.Contains(strings.Join(rules, ","), "pause:"+p.ID) || !strings.Contains(reason, "phishing wave") {
		t.Fatalf("the email during the pause: %d %s %v %q; want it quarantined naming pause %s", st, state, rules, reason, p.ID)
	}
	l := e.do(rita, "GET", "/v1/pauses", nil)
	e.expect(l, http.StatusOK, "")
	if !strings.Contains(l.body, p.ID) {
		t.Fatalf("the active pauses: %s", l.body)
	}
	// The pause entry is logged; bob does not read it.
	if l := e.do(bob, "GET", "/v1/log/entries?start=0&end=1000", nil); strings.Contains(l.body, "phishing wave") {
		t.Errorf("bob reads the pause entry: %s", l.body)
	}
	e.verify()

	// An insider resumes it in the database: verify names it. Put back, it passes.
	e.exec(`UPDATE pauses SET resumed_at = 1, resumed_by = 'acme/rita' WHERE id = '%s'`, p.ID)
	e.verify("pause "+p.ID, "resumed_at")
	e.exec(`UPDATE pauses SET resumed_at = NULL, resumed_by = '' WHERE id = '%s'`, p.ID)
	e.verify()

	e.expect(e.do(rita, "DELETE", "/v1/pauses/"+p.ID, nil), http.StatusOK, "")
	e.expect(e.do(rita, "DELETE", "/v1/pauses/"+p.ID, nil), http.StatusConflict, "conflict")
	e.expect(e.do(rita, "DELETE", "/v1/pauses/01ARZ3NDEKTSV4RRFFQ69G5FAV", nil), http.StatusNotFound, "not_found")
	st1, state1, rules1, _ := decide()
	if st1 != st0 || state1 != state0 || strings.Join(rules1, ",") != strings.Join(rules0, ",") {
		t.Fatalf("the email after the resume: %d %s %v; before the pause: %d %s %v", st1, state1, rules1, st0, state0, rules0)
	}
	e.verify()

	// An insider deletes the pause row: verify names it.
	e.exec(`DELETE FROM pauses WHERE id = '%s'`, p.ID)
	e.verify("pause "+p.ID, "missing from the store")
}
