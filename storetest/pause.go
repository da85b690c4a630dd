package storetest

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
)

// A pause of a channel or a writer holds its candidates as quarantined
// with the pause named in the receipt; other writers and channels are
// decided as before, and after a resume (or the pause's end) the same
// write is decided as it was before the pause. verify passes throughout.
func testPauses(t *testing.T, e *env) {
	alice := e.user("acme", "alice")
	mail := e.act(e.principal("acme", "mail", []string{"agent"}, []string{"agent", "tool:email"}, nil), "alice")
	rev := e.act(e.principal("acme", "rev", []string{"reviewer"}, nil, nil), "")
	e.principal("other", "mail", []string{"agent"}, []string{"agent"}, nil)
	bobP := e.principal("other", "bob", []string{"user"}, nil, nil)
	otherMail := e.act(e.principal("other", "harness", []string{"agent"}, []string{"agent"}, nil), bobP.Name)
	note := custody.Candidate{Namespace: "n", Class: custody.ClassEpisode, Body: "met bob for lunch", Channel: "agent"}
	before := e.remember(mail, note)
	if before.State != custody.StateAdmitted {
		t.Fatalf("the note before any pause: %s (%s)", before.State, before.Reason)
	}

	if _, err := e.svc.SetPause(e.ctx, alice, custody.PauseInput{Channel: "agent", Reason: "x"}); !errors.Is(err, custody.ErrForbidden) {
		t.Fatalf("a user's pause: %v; want ErrForbidden", err)
	}
	for _, in := range []custody.PauseInput{{Reason: "no target"}, {Writer: "mail", Channel: "agent", Reason: "both"},
		{Channel: "agent"}, {Writer: "nobody", Reason: "unknown"}, {Channel: "agent", For: -time.Hour, Reason: "negative"},
		{Channel: "agent", Until: Start.Add(-time.Hour), Reason: "past"}} {
		if _, err := e.svc.SetPause(e.ctx, rev, in); !errors.Is(err, custody.ErrInvalid) {
			t.Errorf("pause %+v: %v; want ErrInvalid", in, err)
		}
	}
	p, err := e.svc.SetPause(e.ctx, rev, custody.PauseInput{Channel: "agent", Reason: "harness compromised"})
	if err != nil {
		t.Fatal(err)
	}
	held := e.remember(mail, note)
	if held.State != custody.StateQuarantined || !slices.Contains(held.Receipt.Rules, "pause:"+p.ID) || !strings.Contains(held.Reason, p.ID) {
		t.Fatalf("the note on a paused channel: %s rules %v (%s); want it quarantined naming pause %s", held.State, held.Receipt.Rules, held.Reason, p.ID)
	}
	// Twins: another channel, and the same channel in another tenant.
	if d := e.fact(alice, "n", "I like tea"); d.State != custody.StateAdmitted {
		t.Errorf("alice on the user channel during the pause: %s (%s)", d.State, d.Reason)
	}
	if d := e.remember(otherMail, note); d.State != custody.StateAdmitted {
		t.Errorf("another tenant's agent channel during the pause: %s (%s)", d.State, d.Reason)
	}
	// The held candidate waits for review like any other.
	if _, err := e.svc.Approve(e.ctx, rev, held.ID); err != nil {
		t.Fatalf("approving the held candidate: %v", err)
	}
	e.verify()

	if ps, err := e.svc.Pauses(e.ctx, rev, false); err != nil || len(ps) != 1 || ps[0].ID != p.ID {
		t.Fatalf("active pauses: %v, %v", ps, err)
	}
	r, err := e.svc.ResumePause(e.ctx, rev, p.ID)
	if err != nil || r.ResumedAt == nil || r.ResumedBy != rev.Principal.ID() {
		t.Fatalf("resume: %+v, %v", r, err)
	}
	if _, err := e.svc.ResumePause(e.ctx, rev, p.ID); !errors.Is(err, custody.ErrConflict) {
		t.Errorf("resuming twice: %v; want ErrConflict", err)
	}
	if _, err := e.svc.ResumePause(e.ctx, e.act(bobP, ""), p.ID); !errors.Is(err, custody.ErrForbidden) {
		t.Errorf("a user's resume: %v; want ErrForbidden", err)
	}
	after := e.remember(mail, note)
	if after.State != before.State || after.Authority != before.Authority || strings.Join(after.Receipt.Rules, ",") != strings.Join(before.Receipt.Rules, ",") {
		t.Fatalf("the note after the resume: %s %v; before the pause: %s %v", after.State, after.Receipt.Rules, before.State, before.Receipt.Rules)
	}

	// A writer's pause for an hour: its writes on every channel are held,
	// another writer's are not, and an hour later they are decided again.
	w, err := e.svc.SetPause(e.ctx, rev, custody.PauseInput{Writer: "mail", For: time.Hour, Reason: "leaked token"})
	if err != nil {
		t.Fatal(err)
	}
	if d := e.remember(mail, note); d.State != custody.StateQuarantined || !slices.Contains(d.Receipt.Rules, "pause:"+w.ID) {
		t.Fatalf("the paused writer's note: %s %v", d.State, d.Receipt.Rules)
	}
	if d := e.remember(otherMail, note); d.State != custody.StateAdmitted {
		t.Errorf("a writer of the same name in another tenant: %s (%s)", d.State, d.Reason)
	}
	e.clock.Advance(time.Hour)
	if d := e.remember(mail, note); d.State != custody.StateAdmitted {
		t.Fatalf("the note after the writer's pause ended: %s (%s)", d.State, d.Reason)
	}
	if ps, err := e.svc.Pauses(e.ctx, rev, true); err != nil || len(ps) != 2 {
		t.Fatalf("all pauses: %v, %v", ps, err)
	}
	if ps, err := e.svc.Pauses(e.ctx, rev, false); err != nil || len(ps) != 0 {
		t.Fatalf("active pauses after both ended: %v, %v", ps, err)
	}
	e.verify()
}
