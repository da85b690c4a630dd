package httpapi

import (
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/custody-mem/custody"
)

// inForce is the body of the subject's value in force for a key, or "".
func inForce(t *testing.T, e *env, token, subject, ns, key string) string {
	t.Helper()
	q := "/v1/memories?namespace=" + ns + "&key=" + key
	if subject != "" {
		q += "&subject=" + subject
	}
	r := e.do(token, "GET", q, nil)
	want(t, r, http.StatusOK, "")
	got := items(t, r)
	if len(got) == 0 {
		return ""
	}
	return got[0]["body"].(string)
}

// TestApprovalIsNotConfirmation pins design rule 8 against the review
// path: a reviewer's approval of a quarantined overwrite of a sensitive key
// makes it pending_confirmation, the old value stays in force, and only the
// owner's confirmation puts the new one in force. Twins: an approved
// overwrite of a plain key, and an approved first value of a sensitive key,
// are in force at once.
func TestApprovalIsNotConfirmation(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env, _ func(testing.TB, string), _ backend) {
		alice := e.principal("acme", "alice", []string{"user"})
		harness := e.principal("acme", "harness", []string{"agent"}, "agent", "tool:email")
		rita := e.principal("acme", "rita", []string{"reviewer"})
		write := func(token, key, body, channel, subject string, status int) string {
			t.Helper()
			r := e.do(token, "POST", "/v1/memories", MemoryRequest{Namespace: "hr", Key: key, Class: "fact", Body: body, Channel: channel, Subject: subject})
			want(t, r, status, "")
			return r.json(t)["id"].(string)
		}
		write(alice, "payroll_account", "ACCT-1042", "user", "", http.StatusCreated)
		over := write(harness, "payroll_account", "ACCT-6666", "tool:email", "alice", http.StatusAccepted)

		r := e.do(rita, "POST", "/v1/review/"+over+"/approve", nil)
		want(t, r, http.StatusOK, "")
		got := r.json(t)
		rc, _ := got["receipt"].(map[string]any)
		rules, _ := rc["rules"].([]any)
		if got["state"] != "pending_confirmation" || rc["actor"] != "acme/rita" ||
			!slices.Contains(rules, any("review-approve")) || !strings.Contains(rc["reason"].(string), "acme/rita") {
			t.Fatalf("approved sensitive overwrite = %s, want pending_confirmation with a receipt naming the reviewer", r.body)
		}
		if v := inForce(t, e, alice, "", "hr", "payroll_account"); v != "ACCT-1042" {
			t.Fatalf("value in force after approval = %q, want the old ACCT-1042", v)
		}
		want(t, e.do(harness, "GET", "/v1/memories/"+over+"?subject=alice", nil), http.StatusNotFound, "not_found")
		d := e.do(harness, "POST", "/v1/gate", GateRequest{Action: "send_money", Args: map[string]any{"recipient": "ACCT-6666", "amount": 10},
			Justification: []string{over}, Subject: "alice"})
		want(t, d, http.StatusOK, "")
		if got := d.json(t)["decision"]; got == "allow" {
			t.Fatalf("gate before the owner's confirmation = %s", d.body)
		}
		// Neither the agent nor the reviewer confirms for her.
		want(t, e.do(harness, "POST", "/v1/memories/"+over+"/confirm?subject=alice", nil), http.StatusNotFound, "not_found")
		want(t, e.do(rita, "POST", "/v1/memories/"+over+"/confirm", nil), http.StatusNotFound, "not_found")
		r = e.do(alice, "POST", "/v1/memories/"+over+"/confirm", nil)
		want(t, r, http.StatusOK, "")
		if got := r.json(t); got["state"] != "admitted" || got["authority"] != "confirmed" {
			t.Fatalf("confirmed = %s, want admitted with authority confirmed", r.body)
		}
		if v := inForce(t, e, alice, "", "hr", "payroll_account"); v != "ACCT-6666" {
			t.Fatalf("value in force after the owner's confirmation = %q, want ACCT-6666", v)
		}

		// Twins: no confirmation is owed.
		write(alice, "desk", "desk 4", "user", "", http.StatusCreated)
		plain := write(harness, "desk", "desk 9", "tool:email", "alice", http.StatusAccepted)
		first := write(harness, "iban", "DE89370400440532013000", "tool:email", "alice", http.StatusAccepted)
		for _, c := range []struct{ id, key, body string }{{plain, "desk", "desk 9"}, {first, "iban", "DE89370400440532013000"}} {
			r = e.do(rita, "POST", "/v1/review/"+c.id+"/approve", nil)
			want(t, r, http.StatusOK, "")
			if got := r.json(t); got["state"] != "admitted" || got["authority"] != "confirmed" {
				t.Errorf("approved %s = %s, want admitted and confirmed", c.key, r.body)
			}
			if v := inForce(t, e, harness, "alice", "hr", c.key); v != c.body {
				t.Errorf("value in force of %s after approval = %q, want %q", c.key, v, c.body)
			}
		}
	})
}

// TestReviewRoutesNeedTheirRoles: an agent acting for the owner cannot
// decline her write waiting for confirmation (403; only her own credential
// or a reviewer can), and a plain user cannot re-evaluate the tenant's
// pending candidates (403). Twins: the owner declines her own write, and a
// reviewer re-evaluates.
func TestReviewRoutesNeedTheirRoles(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env, _ func(testing.TB, string), _ backend) {
		alice := e.principal("acme", "alice", []string{"user"})
		harness := e.principal("acme", "harness", []string{"agent"}, "agent")
		rita := e.principal("acme", "rita", []string{"reviewer"})
		want(t, e.do(alice, "POST", "/v1/memories", MemoryRequest{Namespace: "p", Key: "payee", Class: "fact", Body: "ACCT-1042", Channel: "user"}), http.StatusCreated, "")
		r := e.do(alice, "POST", "/v1/memories", MemoryRequest{Namespace: "p", Key: "payee", Class: "fact", Body: "ACCT-2000", Channel: "user"})
		want(t, r, http.StatusAccepted, "")
		id := r.json(t)["id"].(string)

		want(t, e.do(harness, "POST", "/v1/review/"+id+"/reject?subject=alice", RejectRequest{Reason: "agent declines"}), http.StatusForbidden, "forbidden")
		r = e.do(alice, "GET", "/v1/memories/"+id+"/history", nil)
		want(t, r, http.StatusOK, "")
		if !strings.Contains(r.String(), `"state":"pending_confirmation"`) {
			t.Fatalf("after the agent's refused decline: %s", r.body)
		}
		r = e.do(alice, "POST", "/v1/review/"+id+"/reject", RejectRequest{Reason: "not mine"})
		want(t, r, http.StatusOK, "")
		if got := r.json(t)["state"]; got != "rejected" {
			t.Errorf("owner declines: state %v", got)
		}

		want(t, e.do(alice, "POST", "/v1/review/reevaluate", nil), http.StatusForbidden, "forbidden")
		want(t, e.do(rita, "POST", "/v1/review/reevaluate", nil), http.StatusOK, "")
	})
}

// TestSweepRejectsOnlyWhatWaitedTooLong: the review sweep rejects a
// quarantined candidate older than the review time and leaves a younger
// one in the queue.
func TestSweepRejectsOnlyWhatWaitedTooLong(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			st, _ := b.open(t)
			var now atomic.Int64
			now.Store(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC).UnixNano())
			e := newEnvOn(t, st, nil, custody.Options{ReviewTTL: 24 * time.Hour, Now: func() time.Time { return time.Unix(0, now.Load()) }})
			e.principal("acme", "alice", []string{"user"})
			harness := e.principal("acme", "harness", []string{"agent"}, "tool:email")
			rita := e.principal("acme", "rita", []string{"reviewer"})
			quarantine := func(body string) string {
				r := e.do(harness, "POST", "/v1/memories", MemoryRequest{Namespace: "n", Class: "fact", Body: body, Channel: "tool:email", Subject: "alice"})
				want(t, r, http.StatusAccepted, "")
				return r.json(t)["id"].(string)
			}
			old := quarantine("an old claim")
			now.Add(int64(20 * time.Hour))
			young := quarantine("a young claim")
			now.Add(int64(5 * time.Hour))
			swept, err := e.svc.Sweep(e.ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(swept, []string{old}) {
				t.Errorf("swept %q, want only %s", swept, old)
			}
			r := e.do(rita, "GET", "/v1/review", nil)
			want(t, r, http.StatusOK, "")
			if q := items(t, r); len(q) != 1 || q[0]["id"] != young {
				t.Errorf("queue after the sweep = %s, want the young claim alone", r.body)
			}
		})
	}
}

// TestApprovalKeepsItsReason: a reviewer's reason for an approval is kept
// in the receipt beside the reviewer's name, as a rejection's is; an
// approval without one still names the reviewer.
func TestApprovalKeepsItsReason(t *testing.T) {
	e := newEnv(t, Options{RatePerSecond: -1})
	e.principal("acme", "alice", []string{"user"})
	harness := e.principal("acme", "harness", []string{"agent"}, "tool:email")
	rita := e.principal("acme", "rita", []string{"reviewer"})
	held := func(body string) string {
		r := e.do(harness, "POST", "/v1/memories", MemoryRequest{Namespace: "notes", Class: "fact", Body: body, Channel: "tool:email", Subject: "alice"})
		want(t, r, http.StatusAccepted, "")
		return r.json(t)["id"].(string)
	}
	reasonOf := func(r resp) string {
		t.Helper()
		want(t, r, http.StatusOK, "")
		return r.json(t)["receipt"].(map[string]any)["reason"].(string)
	}
	got := reasonOf(e.do(rita, "POST", "/v1/review/"+held("the office opens at nine")+"/approve", ApproveRequest{Reason: "matches the building's notice"}))
	if !strings.Contains(got, "acme/rita") || !strings.Contains(got, "matches the building's notice") {
		t.Errorf("approval with a reason: receipt reason %q; want the reviewer and the reason", got)
	}
	if got := reasonOf(e.do(rita, "POST", "/v1/review/"+held("lunch is at noon")+"/approve", nil)); got != "approved by reviewer acme/rita" {
		t.Errorf("approval without a reason: receipt reason %q", got)
	}
}
