package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/custody-mem/custody"
)

// storedCount is how many records the tenant holds in any state, on any
// backend.
func storedCount(t testing.TB, e *env, tenant string) int {
	t.Helper()
	n := 0
	err := e.svc.Store().View(e.ctx, func(tx custody.Tx) error {
		return tx.ScanRecords(e.ctx, tenant, func(*custody.Record) error { n++; return nil })
	})
	if err != nil {
		t.Fatalf("ScanRecords: %v", err)
	}
	return n
}

// historyBodies decodes a history answer into version id -> body, and
// reports which versions came withheld.
func historyBodies(t testing.TB, r resp) (map[string]string, map[string]bool) {
	t.Helper()
	var h HistoryResponse
	if err := json.Unmarshal(r.body, &h); err != nil {
		t.Fatalf("not a history answer: %v: %s", err, r.body)
	}
	bodies, withheld := map[string]string{}, map[string]bool{}
	for _, v := range h.Items {
		bodies[v.ID], withheld[v.ID] = v.Body, v.Withheld
	}
	return bodies, withheld
}

// lineageRecord decodes the record of a lineage answer.
func lineageRecord(t testing.TB, r resp) *custody.Record {
	t.Helper()
	var l custody.Lineage
	if err := json.Unmarshal(r.body, &l); err != nil || l.Record == nil {
		t.Fatalf("not a lineage answer: %v: %s", err, r.body)
	}
	return l.Record
}

// TestHistoryAndLineageShowBodiesOnlyWhereGetWould pins design rule 4 on
// /history and /lineage: a reviewer does not read another user's admitted
// owner-only body through them (404, as from get), the owner and an agent
// acting for her do not read a quarantined body through lineage; the
// legitimate reads still carry their bodies: the owner's and her agent's
// own admitted record, and the reviewer's view of the review queue.
func TestHistoryAndLineageShowBodiesOnlyWhereGetWould(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env, _ func(testing.TB, string), _ backend) {
		alice := e.principal("acme", "alice", []string{"user"})
		bob := e.principal("acme", "bob", []string{"user"})
		harness := e.principal("acme", "harness", []string{"agent"}, "agent", "tool:email")
		rita := e.principal("acme", "rita", []string{"reviewer"})

		r := e.do(alice, "POST", "/v1/memories", MemoryRequest{Namespace: "notes", Key: "diary", Class: "fact", Body: "SECRET-OWNER-ONLY", Channel: "user"})
		want(t, r, http.StatusCreated, "")
		own := r.json(t)["id"].(string)
		r = e.do(harness, "POST", "/v1/memories", MemoryRequest{Namespace: "notes", Key: "tip", Class: "fact", Body: "INJECTED-FROM-EMAIL",
			Channel: "tool:email", Subject: "alice", SourceRef: "mail:1"})
		want(t, r, http.StatusAccepted, "")
		held := r.json(t)["id"].(string)
		if got := r.json(t)["state"]; got != "quarantined" {
			t.Fatalf("email fact state = %v, want quarantined", got)
		}

		// The reviewer: another user's owner-only record is as absent as an
		// id nobody has, through get and history alike.
		absent := e.do(rita, "GET", "/v1/memories/"+absentID+"/history", nil)
		want(t, absent, http.StatusNotFound, "not_found")
		want(t, e.do(rita, "GET", "/v1/memories/"+own, nil), http.StatusNotFound, "not_found")
		r = e.do(rita, "GET", "/v1/memories/"+own+"/history", nil)
		want(t, r, http.StatusNotFound, "not_found")
		if normalize(r.body, own) != normalize(absent.body, absentID) {
			t.Errorf("reviewer's history of an owner-only record differs from an absent one:\n%s\n%s", r.body, absent.body)
		}
		// Lineage shows the reviewer its structure and state, never its body.
		r = e.do(rita, "GET", "/v1/memories/"+own+"/lineage", nil)
		want(t, r, http.StatusOK, "")
		if rec := lineageRecord(t, r); rec.State != custody.StateAdmitted || rec.Body != "" || !rec.Withheld ||
			strings.Contains(r.String(), "SECRET-OWNER-ONLY") {
			t.Errorf("reviewer's lineage of an owner-only record: %s", r.body)
		}
		// The twin: the review queue's record carries its body for the reviewer.
		r = e.do(rita, "GET", "/v1/memories/"+held+"/history", nil)
		want(t, r, http.StatusOK, "")
		if bodies, _ := historyBodies(t, r); bodies[held] != "INJECTED-FROM-EMAIL" {
			t.Errorf("reviewer's history of a queued record = %s, want its body", r.body)
		}
		r = e.do(rita, "GET", "/v1/memories/"+held+"/lineage", nil)
		want(t, r, http.StatusOK, "")
		if rec := lineageRecord(t, r); rec.Body != "INJECTED-FROM-EMAIL" || rec.Withheld {
			t.Errorf("reviewer's lineage of a queued record = %s, want its body", r.body)
		}

		// The owner and her agent: the quarantined record's lineage and
		// history show its state, not its body; their admitted record's
		// show its body.
		for _, c := range []struct{ who, token, q string }{{"alice", alice, ""}, {"harness", harness, "?subject=alice"}} {
			r = e.do(c.token, "GET", "/v1/memories/"+held+"/lineage"+c.q, nil)
			want(t, r, http.StatusOK, "")
			if rec := lineageRecord(t, r); rec.State != custody.StateQuarantined || rec.Body != "" || !rec.Withheld ||
				strings.Contains(r.String(), "INJECTED-FROM-EMAIL") {
				t.Errorf("%s reads the quarantined record's lineage: %s", c.who, r.body)
			}
			r = e.do(c.token, "GET", "/v1/memories/"+held+"/history"+c.q, nil)
			want(t, r, http.StatusOK, "")
			if bodies, withheld := historyBodies(t, r); bodies[held] != "" || !withheld[held] {
				t.Errorf("%s reads the quarantined record's history: %s", c.who, r.body)
			}
			r = e.do(c.token, "GET", "/v1/memories/"+own+"/lineage"+c.q, nil)
			want(t, r, http.StatusOK, "")
			if rec := lineageRecord(t, r); rec.Body != "SECRET-OWNER-ONLY" || rec.Withheld {
				t.Errorf("%s's lineage of the admitted record lost its body: %s", c.who, r.body)
			}
			r = e.do(c.token, "GET", "/v1/memories/"+own+"/history"+c.q, nil)
			want(t, r, http.StatusOK, "")
			if bodies, _ := historyBodies(t, r); bodies[own] != "SECRET-OWNER-ONLY" {
				t.Errorf("%s's history of the admitted record lost its body: %s", c.who, r.body)
			}
		}

		// Another user sees neither.
		for _, id := range []string{own, held} {
			for _, route := range []string{"/history", "/lineage"} {
				want(t, e.do(bob, "GET", "/v1/memories/"+id+route, nil), http.StatusNotFound, "not_found")
			}
		}
	})
}

// TestHistoryOfAKeyWithAQueuedVersion: a reviewer who may read the queued
// version of another user's key sees that version with its body and not
// the owner-only versions beside it; naming one of those is 404.
func TestHistoryOfAKeyWithAQueuedVersion(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env, _ func(testing.TB, string), _ backend) {
		alice := e.principal("acme", "alice", []string{"user"})
		harness := e.principal("acme", "harness", []string{"agent"}, "agent", "tool:email")
		rita := e.principal("acme", "rita", []string{"reviewer"})
		r := e.do(alice, "POST", "/v1/memories", MemoryRequest{Namespace: "p", Key: "city", Class: "fact", Body: "PRIVATE-CITY", Channel: "user"})
		want(t, r, http.StatusCreated, "")
		v1 := r.json(t)["id"].(string)
		r = e.do(harness, "POST", "/v1/memories", MemoryRequest{Namespace: "p", Key: "city", Class: "fact", Body: "EMAILED-CITY", Channel: "tool:email", Subject: "alice"})
		want(t, r, http.StatusAccepted, "")
		v2 := r.json(t)["id"].(string)

		want(t, e.do(rita, "GET", "/v1/memories/"+v1+"/history", nil), http.StatusNotFound, "not_found")
		r = e.do(rita, "GET", "/v1/memories/"+v2+"/history", nil)
		want(t, r, http.StatusOK, "")
		bodies, _ := historyBodies(t, r)
		if len(bodies) != 1 || bodies[v2] != "EMAILED-CITY" || strings.Contains(r.String(), "PRIVATE-CITY") {
			t.Errorf("reviewer's history of the queued version = %s, want that version alone", r.body)
		}
		// The owner sees both versions, the queued one withheld.
		r = e.do(alice, "GET", "/v1/memories/"+v2+"/history", nil)
		want(t, r, http.StatusOK, "")
		bodies, withheld := historyBodies(t, r)
		if len(bodies) != 2 || bodies[v1] != "PRIVATE-CITY" || bodies[v2] != "" || !withheld[v2] {
			t.Errorf("owner's history = %s, want v1 with its body and v2 withheld", r.body)
		}
		// Once rejected, the version leaves the queue: no body for anyone.
		want(t, e.do(rita, "POST", "/v1/review/"+v2+"/reject", RejectRequest{Reason: "from an email"}), http.StatusOK, "")
		want(t, e.do(rita, "GET", "/v1/memories/"+v2+"/history", nil), http.StatusNotFound, "not_found")
		r = e.do(rita, "GET", "/v1/memories/"+v2+"/lineage", nil)
		want(t, r, http.StatusOK, "")
		if strings.Contains(r.String(), "EMAILED-CITY") {
			t.Errorf("reviewer reads a rejected body through lineage: %s", r.body)
		}
	})
}

// TestLineageOfAHeldRecordIsNotFoundOutsideItsOwner: a record shared with
// the tenant but not admitted (quarantined until a reviewer approves the
// sharing) is, to another user of the tenant, as absent through lineage as
// through get; its owner sees its lineage, and once approved so does the
// other user.
func TestLineageOfAHeldRecordIsNotFoundOutsideItsOwner(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env, _ func(testing.TB, string), _ backend) {
		alice := e.principal("acme", "alice", []string{"user"})
		bob := e.principal("acme", "bob", []string{"user"})
		rita := e.principal("acme", "rita", []string{"reviewer"})
		r := e.do(alice, "POST", "/v1/memories", MemoryRequest{Namespace: "team", Class: "fact", Body: "offsite in May", Channel: "user", Audience: "tenant"})
		want(t, r, http.StatusAccepted, "")
		id := r.json(t)["id"].(string)
		absent := e.do(bob, "GET", "/v1/memories/"+absentID+"/lineage", nil)
		want(t, absent, http.StatusNotFound, "not_found")
		r = e.do(bob, "GET", "/v1/memories/"+id+"/lineage", nil)
		want(t, r, http.StatusNotFound, "not_found")
		if normalize(r.body, id) != normalize(absent.body, absentID) {
			t.Errorf("lineage of a held record differs from an absent one:\n%s\n%s", r.body, absent.body)
		}
		want(t, e.do(alice, "GET", "/v1/memories/"+id+"/lineage", nil), http.StatusOK, "")
		want(t, e.do(rita, "POST", "/v1/review/"+id+"/approve", nil), http.StatusOK, "")
		r = e.do(bob, "GET", "/v1/memories/"+id+"/lineage", nil)
		want(t, r, http.StatusOK, "")
		if rec := lineageRecord(t, r); rec.Body != "offsite in May" {
			t.Errorf("bob's lineage of the approved record = %s", r.body)
		}
	})
}
