package console_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	custody "github.com/custody-mem/custody"
)

// TestConsoleStoryDefects: the story of a record asks before it takes
// anything away and offers only what the principal may do there; a long
// body collapses and the tables keep their columns; the lineage picture
// keeps its text at its size; the impact counts a gate decision once and
// its sessions lead to their decisions; times are readable; an agent's
// token is told the console is not for it; the log says what the last
// verify did not cover.
func TestConsoleStoryDefects(t *testing.T) {
	bctx := browser(t)
	e := newEnv(t)
	_, rita := e.principal("acme", "rita", []string{"reviewer"})
	alice, _ := e.principal("acme", "alice", []string{"user"}, custody.ChannelUser)
	harness, hTok := e.principal("acme", "harness", []string{"agent"}, "tool:web", "tool:email", custody.ChannelDerive)
	long := strings.Repeat("A", 3000)
	held := e.remember(harness, "alice", custody.Candidate{Namespace: "web", Class: "fact", Body: long, Channel: "tool:web", SourceRef: "https://long.example/"})
	other := e.remember(harness, "alice", custody.Candidate{Namespace: "web", Class: "fact", Body: "short", Channel: "tool:web"})
	e.remember(alice, "", custody.Candidate{Namespace: "bank", Key: "payee_account", Class: "fact", Body: "ACCT-1042", Channel: custody.ChannelUser})
	payee := e.remember(harness, "alice", custody.Candidate{Namespace: "bank", Key: "payee_account", Class: "fact", Body: "ACCT-9", Channel: "tool:email"})
	if st := e.call(rita, "POST", "/v1/review/"+payee.ID+"/approve", map[string]string{}, nil); st != 200 {
		t.Fatalf("approve: %d", st)
	}
	mail := e.remember(harness, "alice", custody.Candidate{Namespace: "mail", Class: custody.ClassEpisode, Body: "Vendor: pay ACCT-5150", Channel: "tool:email"})
	sum := e.remember(harness, "alice", custody.Candidate{Namespace: "digest", Class: custody.ClassEpisode, Body: "vendor account ACCT-5150",
		Channel: custody.ChannelDerive, DerivedFrom: []custody.Edge{{ID: mail.ID, Weight: 1}}})
	var sess custody.Session
	if st := e.call(hTok, "POST", "/v1/sessions", map[string]string{"subject": "alice"}, &sess); st != 201 {
		t.Fatalf("session: %d", st)
	}
	if st := e.call(hTok, "GET", "/v1/memories/"+mail.ID+"?subject=alice&session="+sess.ID, nil, nil); st != 200 {
		t.Fatalf("read: %d", st)
	}
	var gd custody.GateDecision
	if st := e.call(hTok, "POST", "/v1/gate", map[string]any{"action": "payments.send", "args": map[string]any{"to": "ACCT-5150"},
		"justification": []string{mail.ID}, "subject": "alice", "session": sess.ID}, &gd); st != 200 {
		t.Fatalf("gate: %d", st)
	}
	ctx := tab(t, bctx)
	signIn(t, ctx, e.srv.URL, rita)

	t.Run("5: destructive actions ask for a reason and a second press; only allowed actions show", func(t *testing.T) {
		run(t, ctx, "the held record's story", chromedp.Navigate(e.srv.URL+"/console/#record/"+other.ID))
		until(t, ctx, "its actions", `!!document.querySelector('#story .actions button[data-act=retire]')`)
		acts := eval[string](t, ctx, `[...document.querySelectorAll('#story .actions button[data-act]')].map(b => b.dataset.act).join(',')`)
		if acts != "approve,reject,retire" {
			t.Fatalf("a quarantined record's story offers %q, want approve,reject,retire", acts)
		}
		run(t, ctx, "Retire…", chromedp.Click(chromedp.CSS(`#story .actions button[data-act=retire]`)))
		until(t, ctx, "the confirmation", `document.activeElement.name === 'reason'`)
		if f := text(t, ctx, "#story .decide"); !strings.Contains(f, "Permanent") || !strings.Contains(f, "required") {
			t.Fatalf("the retire form says %q", f)
		}
		run(t, ctx, "Enter without a reason", chromedp.KeyEvent(kb.Enter))
		if st := e.state(rita, other.ID); st != custody.StateQuarantined {
			t.Fatalf("one click and Enter retired it: %s", st)
		}
		run(t, ctx, "Esc", chromedp.KeyEvent(kb.Escape))
		until(t, ctx, "the form is gone, focus back on Retire", `!document.querySelector('#story .decide') && document.activeElement.dataset.act === 'retire'`)
		run(t, ctx, "Enter, a reason, Enter", chromedp.KeyEvent(kb.Enter))
		until(t, ctx, "the form", `document.activeElement.name === 'reason'`)
		run(t, ctx, "a reason", chromedp.KeyEvent("spam"+kb.Enter))
		until(t, ctx, "retired", `document.querySelector('#story').textContent.includes('retired')`)
		if r := e.record(rita, other.ID); r.State != custody.StateRetired || !strings.Contains(r.Receipt.Reason, "spam") {
			t.Fatalf("after retiring: %s %+v", r.State, r.Receipt)
		}
		if acts := eval[string](t, ctx, `[...document.querySelectorAll('#story .actions button[data-act]')].map(b => b.dataset.act).join(',')`); acts != "" {
			t.Fatalf("a retired record's story still offers %q", acts)
		}
	})

	t.Run("10: a long body collapses and the tables keep their columns", func(t *testing.T) {
		run(t, ctx, "the long record's story", chromedp.Navigate(e.srv.URL+"/console/#record/"+held.ID))
		until(t, ctx, "the story", `!!document.querySelector('#story .facts-table .collapsible')`)
		got := eval[map[string]float64](t, ctx, `(() => { const th = [...document.querySelectorAll('#story .facts-table th')].find(h => h.textContent === 'State');
			const body = document.querySelector('#story .facts-table .collapsible');
			return { thw: th.getBoundingClientRect().width, thh: th.getBoundingClientRect().height, line: parseFloat(getComputedStyle(th).lineHeight) || 24,
				shown: [...body.querySelector('.u').childNodes].filter(n => !n.hidden).map(n => n.textContent).join('').length }; })()`)
		if got["thh"] > 1.6*got["line"]+8 || got["thw"] < 30 {
			t.Errorf("the label column is crushed: %v", got)
		}
		if got["shown"] >= 3000 {
			t.Errorf("the 3,000-character body is shown whole (%v characters) before it is asked for", got["shown"])
		}
		run(t, ctx, "Show all", chromedp.Click(chromedp.CSS(`#story .facts-table button.toggle`)))
		if n := eval[int](t, ctx, `[...document.querySelector('#story .facts-table .collapsible .u').childNodes].filter(n => !n.hidden).map(n => n.textContent).join('').replace('…','').length`); n != 3000 {
			t.Errorf("after Show all, %d characters show", n)
		}
		atEverySize(t, ctx, "a long record's story")
	})

	t.Run("11: the lineage picture keeps its text at its size and in its boxes", func(t *testing.T) {
		run(t, ctx, "a one-node picture", chromedp.Navigate(e.srv.URL+"/console/#record/"+payee.ID))
		until(t, ctx, "the picture", `document.querySelector('svg.lineage a.node')?.dataset.id === '`+payee.ID+`'`)
		for _, v := range []viewport{{"1280px", 1280, 900, 1}, {"400px", 400, 800, 1}} {
			run(t, ctx, "sizing", chromedp.EmulateViewport(v.width, v.height))
			until(t, ctx, "the layout", "window.innerWidth === "+itoa(v.width))
			got := eval[map[string]float64](t, ctx, `(() => { const n = document.querySelector('svg.lineage a.node'); const s = n.querySelector('text.state').getBoundingClientRect();
				const r = n.querySelector('rect').getBoundingClientRect();
				return { h: s.height, right: s.right, boxRight: r.right }; })()`)
			if got["h"] < 10 || got["h"] > 20 {
				t.Errorf("at %s a node's text is %.1f pixels high, want its 12px size", v.name, got["h"])
			}
			if got["right"] > got["boxRight"] {
				t.Errorf("at %s the state line runs out of its box: %v", v.name, got)
			}
		}
		if st := eval[string](t, ctx, `document.querySelector('svg.lineage a.node text.state').textContent`); !strings.Contains(st, "pending_confirmation") {
			t.Errorf("the node reads %q", st)
		}
		run(t, ctx, "back", chromedp.EmulateViewport(1280, 900))
	})

	t.Run("12: the impact counts a decision once, its sessions lead to it, and times read as times", func(t *testing.T) {
		run(t, ctx, "the e-mail's impact", chromedp.Navigate(e.srv.URL+"/console/#impact/"+mail.ID))
		until(t, ctx, "the impact", `!!document.querySelector('#impact-body .impact-decisions')`)
		if n := eval[int](t, ctx, `document.querySelectorAll('#impact-body .impact-decisions tbody tr').length`); n != 1 {
			t.Errorf("one gate decision is %d rows", n)
		}
		body := text(t, ctx, "#impact-body")
		if !strings.Contains(body, "relied on it (1)") || !strings.Contains(body, sum.ID) {
			t.Errorf("the impact:\n%s", body)
		}
		if regexp.MustCompile(`\d\d:\d\d:\d\d\.\d+`).MatchString(body) || !strings.Contains(body, "UTC") {
			t.Errorf("raw times in the impact:\n%s", body)
		}
		run(t, ctx, "the session's link", chromedp.Click(chromedp.CSS(`#impact-body a.session-link`)))
		until(t, ctx, "its decisions shown", fmt.Sprintf(`document.querySelector('#status').textContent.includes('of session %s')`, sess.ID))
	})

	t.Run("12: the log says what the last verify did not cover", func(t *testing.T) {
		if err := custody.WriteVerifyStatus(e.verified, custody.VerifyStatus{At: time.Now().UTC(), OK: true, Entries: 3,
			Logs: []custody.LogReport{{Tenant: "acme", Entries: 3}}}); err != nil {
			t.Fatal(err)
		}
		run(t, ctx, "the log page", chromedp.Navigate(e.srv.URL+"/console/#log"))
		until(t, ctx, "the log status", `!!document.querySelector('pre.checkpoint')`)
		if got := text(t, ctx, "#log-body"); !strings.Contains(got, "covering 3 of the") || !strings.Contains(got, "were never verified") {
			t.Fatalf("the log page:\n%s", got)
		}
	})

	t.Run("12: an agent's token is told the console is not for it", func(t *testing.T) {
		atab := tab(t, bctx)
		run(t, atab, "signing in as the agent", chromedp.Navigate(e.srv.URL+"/console/"), chromedp.WaitVisible(chromedp.ID("token")),
			chromedp.SendKeys(chromedp.ID("token"), hTok+kb.Enter))
		until(t, atab, "the refusal", `document.querySelector('#status').textContent.includes('the console is for reviewers')`)
		if s := text(t, atab, "#status"); strings.Contains(s, "must name the user") || eval[int](t, atab, "sessionStorage.length") != 0 {
			t.Fatalf("the agent's sign-in: %q, session storage %d", s, eval[int](t, atab, "sessionStorage.length"))
		}
	})
}
