package console_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	custody "github.com/custody-mem/custody"
)

// TestConsoleImpactInBrowser: from a poisoned e-mail's story a reviewer
// opens its impact and sees the summary derived from it, the two sessions
// that read it (by search and by get) and the gate decision that cited it;
// a user's token sees the impact refused, and nothing of it.
func TestConsoleImpactInBrowser(t *testing.T) {
	bctx := browser(t)
	e := newEnv(t)
	_, rita := e.principal("acme", "rita", []string{"reviewer"})
	_, alice := e.principal("acme", "alice", []string{"user"})
	harness, hTok := e.principal("acme", "harness", []string{"agent"}, custody.ChannelAgent, "tool:email", custody.ChannelDerive)
	mail := e.remember(harness, "alice", custody.Candidate{Namespace: "mail", Class: custody.ClassEpisode,
		Body: "Vendor: our account is now ACCT-5150", Channel: "tool:email"})
	sum := e.remember(harness, "alice", custody.Candidate{Namespace: "digest", Class: custody.ClassEpisode,
		Body: "the vendor changed accounts", Channel: custody.ChannelDerive, DerivedFrom: []custody.Edge{{ID: mail.ID, Weight: 1}}})
	var sessions []string
	for range 2 {
		var s custody.Session
		if st := e.call(hTok, "POST", "/v1/sessions", map[string]string{"subject": "alice"}, &s); st != 201 {
			t.Fatalf("open a session: %d", st)
		}
		sessions = append(sessions, s.ID)
	}
	if st := e.call(hTok, "POST", "/v1/search", map[string]any{"query": "ACCT-5150", "subject": "alice", "session": sessions[0]}, nil); st != 200 {
		t.Fatalf("search in a session: %d", st)
	}
	if st := e.call(hTok, "GET", "/v1/memories/"+mail.ID+"?subject=alice&session="+sessions[1], nil, nil); st != 200 {
		t.Fatalf("get in a session: %d", st)
	}
	var gd custody.GateDecision
	if st := e.call(hTok, "POST", "/v1/gate", map[string]any{"action": "payments.send", "args": map[string]any{"to": "ACCT-5150"},
		"justification": []string{mail.ID}, "subject": "alice", "session": sessions[0]}, &gd); st != 200 {
		t.Fatalf("gate: %d", st)
	}

	ctx := tab(t, bctx)
	signIn(t, ctx, e.srv.URL, rita)
	run(t, ctx, "opening the e-mail's story", chromedp.Navigate(e.srv.URL+"/console/#record/"+mail.ID))
	until(t, ctx, "the story links to the impact", `!!document.querySelector('#story-impact')`)
	run(t, ctx, "following the link", chromedp.Click(chromedp.ID("story-impact")))
	until(t, ctx, "the impact shows", `!!document.querySelector('#impact-body .impact-decisions')`)
	atEverySize(t, ctx, "a record's impact")
	got := eval[map[string]string](t, ctx, `(() => ({
		desc: document.querySelector('#impact-body .impact-descendants').textContent,
		sessions: document.querySelector('#impact-body .impact-sessions').textContent,
		rows: String(document.querySelectorAll('#impact-body .impact-sessions tr').length - 1),
		decisions: document.querySelector('#impact-body .impact-decisions').textContent,
		hash: location.hash }))()`)
	if got["hash"] != "#impact/"+mail.ID || !strings.Contains(got["desc"], sum.ID) {
		t.Errorf("impact page %q: descendants %q; want the summary %s", got["hash"], got["desc"], sum.ID)
	}
	if got["rows"] != "2" || !strings.Contains(got["sessions"], sessions[0]) || !strings.Contains(got["sessions"], sessions[1]) ||
		!strings.Contains(got["sessions"], "search") || !strings.Contains(got["sessions"], "get") || !strings.Contains(got["sessions"], "acme/harness") {
		t.Errorf("impact sessions (%s rows): %q; want %v by search and by get", got["rows"], got["sessions"], sessions)
	}
	if !strings.Contains(got["decisions"], "payments.send") || !strings.Contains(got["decisions"], gd.Decision) || !strings.Contains(got["decisions"], "cited as justification") {
		t.Errorf("impact decisions: %q; want the payments.send decision (%s) citing it", got["decisions"], gd.Decision)
	}

	utab := tab(t, bctx)
	signIn(t, utab, e.srv.URL, alice)
	run(t, utab, "opening the impact as the owner", chromedp.Navigate(e.srv.URL+"/console/#impact/"+mail.ID))
	until(t, utab, "the refusal shows", `document.querySelector('#impact-body').textContent.includes('404')`)
	if body := text(t, utab, "#impact-body"); strings.Contains(body, sessions[0]) || strings.Contains(body, sum.ID) {
		t.Errorf("the owner's impact page shows %q", body)
	}
}
