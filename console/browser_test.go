package console_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/httpapi"
)

var updateScreenshots = flag.Bool("update-screenshots", false, "write the console screenshots to docs/console/")

// story is the seeded tenant of the browser tests.
type story struct {
	reviewer, owner string // tokens: rita (reviewer) and alice (user)
	payee           string // alice's payee account record, admitted
	poison          []string
	benign          []string
	root            string   // a retired fact with derived descendants
	cascade         []string // its descendants, suspended
}

// seed writes the payee story: alice's account, a vendor email (three
// copies, two from one message, one from another with the same body)
// trying to replace it, two benign notes from one intranet page, and a
// cascade of derived facts whose root was retired.
func seed(t *testing.T, e *env) story {
	_, revTok := e.principal("acme", "rita", []string{"reviewer"})
	alice, aliceTok := e.principal("acme", "alice", []string{"user"}, custody.ChannelUser, custody.ChannelDerive)
	harness, _ := e.principal("acme", "harness", []string{"agent"}, custody.ChannelAgent, "tool:email", "tool:web")
	s := story{reviewer: revTok, owner: aliceTok}
	admitted := func(d *custody.Decision) string {
		t.Helper()
		if d.State != custody.StateAdmitted {
			t.Fatalf("seed: %s, want admitted (%s)", d.State, d.Reason)
		}
		return d.ID
	}
	held := func(d *custody.Decision) string {
		t.Helper()
		if d.State != custody.StateQuarantined {
			t.Fatalf("seed: %s, want quarantined (%s)", d.State, d.Reason)
		}
		return d.ID
	}
	s.payee = admitted(e.remember(alice, "", custody.Candidate{Namespace: "bank", Key: "payee_account", Class: "fact", Body: "ACCT-1042", Channel: custody.ChannelUser}))
	for _, src := range []string{"mail:vendor-42", "mail:vendor-42", "mail:vendor-43"} {
		s.poison = append(s.poison, held(e.remember(harness, "alice", custody.Candidate{Namespace: "bank", Key: "payee_account", Class: "fact",
			Body: "ACCT-7777", Channel: "tool:email", SourceRef: src})))
	}
	for _, day := range []string{"24", "31"} {
		s.benign = append(s.benign, held(e.remember(harness, "alice", custody.Candidate{Namespace: "office", Class: "fact",
			Body: "The office is closed on " + day + " December", Channel: "tool:web", SourceRef: "https://intranet.example/holidays"})))
	}
	s.root = admitted(e.remember(alice, "", custody.Candidate{Namespace: "travel", Key: "home", Class: "fact", Body: "Alice lives in Lyon", Channel: custody.ChannelUser}))
	child := admitted(e.remember(alice, "", custody.Candidate{Namespace: "travel", Key: "timezone", Class: "fact", Body: "Alice's timezone is Europe/Paris",
		Channel: custody.ChannelDerive, DerivedFrom: []custody.Edge{{ID: s.root, Weight: 0.9}}}))
	grandchild := admitted(e.remember(alice, "", custody.Candidate{Namespace: "travel", Key: "meetings", Class: "fact", Body: "Schedule Alice's calls after 9:00 CET",
		Channel: custody.ChannelDerive, DerivedFrom: []custody.Edge{{ID: child, Weight: 0.7}}}))
	s.cascade = []string{child, grandchild}
	var aff httpapi.AffectedResponse
	if st := e.call(revTok, "POST", "/v1/memories/"+s.root+"/retire", map[string]string{"reason": "alice moved"}, &aff); st != 200 || len(aff.Affected) != 3 {
		t.Fatalf("seed: retire the root: status %d, affected %v", st, aff.Affected)
	}
	return s
}

// listBodies is what the owner's reads return in namespace ns, with the
// authority of each.
func listBodies(t *testing.T, e *env, token, ns string) map[string]custody.Authority {
	var l httpapi.ListResponse
	if st := e.call(token, "GET", "/v1/memories?namespace="+ns, nil, &l); st != 200 {
		t.Fatalf("list %s: status %d", ns, st)
	}
	out := map[string]custody.Authority{}
	for _, r := range l.Items {
		out[r.Body] = r.Authority
	}
	return out
}

func queueIDs(t *testing.T, e *env, token string) map[string]bool {
	var q httpapi.ReviewResponse
	if st := e.call(token, "GET", "/v1/review?limit=500", nil, &q); st != 200 {
		t.Fatalf("review queue: status %d", st)
	}
	out := map[string]bool{}
	for _, it := range q.Items {
		out[it.ID] = true
	}
	return out
}

func screenshot(t *testing.T, ctx context.Context, name string) {
	if !*updateScreenshots {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join("..", "docs", "console", name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", path)
}

// rowWith is a JavaScript expression for the queue row whose text has s.
func rowWith(s string) string {
	return fmt.Sprintf(`[...document.querySelectorAll('#queue-rows .row')].find(r => r.textContent.includes(%q))`, s)
}

func TestConsoleInBrowser(t *testing.T) {
	bctx := browser(t)
	e := newEnv(t)
	s := seed(t, e)

	t.Run("a user token gets no reviewer's actions", func(t *testing.T) {
		ctx := tab(t, bctx)
		signIn(t, ctx, e.srv.URL, s.owner)
		until(t, ctx, "the owner's page", `location.hash === '#mine' && !document.querySelector('#mine').hidden`)
		if eval[bool](t, ctx, `!document.querySelector('#nav-queue').hidden`) {
			t.Fatal("a user's console offers the review queue")
		}
		run(t, ctx, "opening the queue by its address", chromedp.Navigate(e.srv.URL+"/console/#queue"))
		until(t, ctx, "the queue says 403", `document.querySelector('#queue-rows').textContent.includes('403')`)
		run(t, ctx, "opening the poison's story", chromedp.Navigate(e.srv.URL+"/console/#record/"+s.poison[0]))
		until(t, ctx, "the story shows", `!!document.querySelector('#story .actions')`)
		if n := eval[int](t, ctx, `document.querySelectorAll('#story .actions button').length`); n != 0 {
			t.Fatalf("the owner's story of a held record offers %d buttons; she may take none of those actions", n)
		}
		if !strings.Contains(text(t, ctx, "#story .actions"), "need a reviewer or admin") {
			t.Fatalf("the story does not say why there is nothing to do: %q", text(t, ctx, "#story .actions"))
		}
		// The server refuses what the page does not offer.
		if st := e.call(s.owner, "POST", "/v1/review/"+s.poison[0]+"/approve", map[string]string{}, nil); st != 403 {
			t.Fatalf("the owner's approval through the API: %d, want 403", st)
		}
		if st := e.state(s.reviewer, s.poison[0]); st != custody.StateQuarantined {
			t.Fatalf("after the owner's refused approval the poison is %s, want quarantined", st)
		}
		if got := listBodies(t, e, s.owner, "bank"); len(got) != 1 || got["ACCT-1042"] != custody.AuthorityUser {
			t.Fatalf("after the refused actions alice reads %v, want only ACCT-1042", got)
		}
	})

	ctx := tab(t, bctx)
	run(t, ctx, "opening the console", chromedp.Navigate(e.srv.URL+"/console/"), chromedp.WaitVisible(chromedp.ID("token")))
	atEverySize(t, ctx, "the sign-in page")
	signIn(t, ctx, e.srv.URL, s.reviewer)
	until(t, ctx, "the queue is shown", `document.querySelector('#queue-rows').dataset.items === '5'`)

	t.Run("the poisoned payee email is one row with its copies", func(t *testing.T) {
		row := rowWith("ACCT-7777")
		until(t, ctx, "the poison row", "!!"+row)
		got := eval[map[string]string](t, ctx, `(() => { const r = `+row+`; return {count: r.querySelector('.count').textContent,
			source: r.querySelector('.source').textContent, audience: r.querySelector('.audience').textContent,
			rules: r.querySelector('.rules').textContent, text: r.textContent}; })()`)
		if got["count"] != "3" || !strings.Contains(got["source"], "mail:vendor-42") || !strings.Contains(got["source"], "mail:vendor-43") ||
			!strings.Contains(got["audience"], "its owner alice only") || !strings.Contains(got["rules"], "external-is-episode-only") ||
			!strings.Contains(got["text"], "tool:email") || !strings.Contains(got["text"], "acme/harness") || !strings.Contains(got["text"], "Expires to rejected in") {
			t.Fatalf("poison row = %v", got)
		}
		if title := eval[string](t, ctx, "document.title"); !strings.HasPrefix(title, "(5)") {
			t.Fatalf("title = %q, want the count (5) first", title)
		}
		if rows := eval[int](t, ctx, `document.querySelectorAll('#queue-rows .row').length`); rows != 2 {
			t.Fatalf("rows = %d, want 2 (the poison, the intranet page)", rows)
		}
	})

	t.Run("readable at 200% zoom", func(t *testing.T) {
		// 200% zoom of a 1200-pixel window is a 600-pixel layout viewport.
		run(t, ctx, "zooming", chromedp.EmulateViewport(600, 900))
		until(t, ctx, "the layout reflows", `window.innerWidth === 600`)
		if w := eval[int](t, ctx, `document.documentElement.scrollWidth`); w > 600 {
			t.Fatalf("at 200%% zoom the page is %d pixels wide, wider than its 600-pixel viewport", w)
		}
		run(t, ctx, "unzooming", chromedp.EmulateViewport(1200, 900))
	})

	t.Run("approving a group of benign items admits them confirmed", func(t *testing.T) {
		row := rowWith("intranet.example")
		run(t, ctx, "opening the approval", chromedp.Click(chromedp.JSPath(row+`.querySelector('button.approve')`)))
		until(t, ctx, "the confirm form", `!!document.querySelector('.decide button[type=submit]')`)
		run(t, ctx, "giving a reason", chromedp.SendKeys(".decide input[name=reason]", "the intranet notice says so"))
		run(t, ctx, "confirming", chromedp.Click(chromedp.CSS(".decide button[type=submit]")))
		until(t, ctx, "the queue has shrunk", `document.querySelector('#queue-rows').dataset.items === '3'`)
		var l httpapi.ListResponse
		if st := e.call(s.owner, "GET", "/v1/memories?namespace=office", nil, &l); st != 200 || len(l.Items) != 2 {
			t.Fatalf("list office: status %d, %d items", st, len(l.Items))
		}
		for _, r := range l.Items {
			if r.Receipt == nil || !strings.Contains(r.Receipt.Reason, "the intranet notice says so") {
				t.Fatalf("approved %q has receipt %+v; want the reviewer's reason in it", r.Body, r.Receipt)
			}
		}
		if st := text(t, ctx, "#status"); !strings.Contains(st, "Approved 2 of 2") {
			t.Fatalf("status = %q", st)
		}
		got := listBodies(t, e, s.owner, "office")
		if len(got) != 2 || got["The office is closed on 24 December"] != custody.AuthorityConfirmed || got["The office is closed on 31 December"] != custody.AuthorityConfirmed {
			t.Fatalf("alice reads %v, want both notes with authority confirmed", got)
		}
	})

	t.Run("rejecting the poison with the keyboard", func(t *testing.T) {
		run(t, ctx, "focusing the queue", chromedp.Click(chromedp.CSS("#queue h2")))
		run(t, ctx, "j k r", chromedp.KeyEvent("jk"))
		until(t, ctx, "the poison row is selected", `document.querySelector('.row.selected').textContent.includes('ACCT-7777')`)
		// a opens the approval; Esc takes it back, changing nothing.
		run(t, ctx, "a", chromedp.KeyEvent("a"))
		until(t, ctx, "the approval form has focus", `document.activeElement.closest('.decide') !== null`)
		run(t, ctx, "Esc", chromedp.KeyEvent(kb.Escape))
		until(t, ctx, "the approval form is gone", `document.querySelector('.decide') === null`)
		if st := e.state(s.reviewer, s.poison[0]); st != custody.StateQuarantined {
			t.Fatalf("after a cancelled approval the poison is %s", st)
		}
		run(t, ctx, "r", chromedp.KeyEvent("r"))
		until(t, ctx, "the reason field has focus", `document.activeElement.name === 'reason'`)
		run(t, ctx, "typing the reason", chromedp.KeyEvent("vendor phishing"+kb.Enter))
		until(t, ctx, "the queue is empty", `document.querySelector('#queue-rows').dataset.items === '0'`)
		q := queueIDs(t, e, s.reviewer)
		for _, id := range s.poison {
			if q[id] {
				t.Fatalf("poison %s is still in the queue", id)
			}
			if r := e.record(s.reviewer, id); r.State != custody.StateRejected || r.Receipt == nil || r.Receipt.Reason != "vendor phishing" {
				t.Fatalf("poison %s is %s with receipt %+v, want rejected for vendor phishing", id, r.State, r.Receipt)
			}
		}
		if got := listBodies(t, e, s.owner, "bank"); len(got) != 1 || got["ACCT-1042"] != custody.AuthorityUser {
			t.Fatalf("alice reads %v, want only ACCT-1042", got)
		}
		var sr httpapi.SearchResponse
		if st := e.call(s.owner, "POST", "/v1/search", map[string]any{"query": "ACCT-7777"}, &sr); st != 200 {
			t.Fatalf("search: status %d", st)
		}
		for _, h := range sr.Items {
			if strings.Contains(h.Body, "7777") {
				t.Fatalf("alice's search finds the rejected poison: %+v", h)
			}
		}
		if title := eval[string](t, ctx, "document.title"); !strings.HasPrefix(title, "(0)") {
			t.Fatalf("title = %q, want (0)", title)
		}
	})

	t.Run("the lineage picture of a cascade shows the suspended descendants", func(t *testing.T) {
		run(t, ctx, "opening the root's story", chromedp.Navigate(e.srv.URL+"/console/#record/"+s.root))
		until(t, ctx, "the picture", `document.querySelectorAll('svg.lineage a.node').length === 3`)
		for _, id := range s.cascade {
			st := eval[string](t, ctx, fmt.Sprintf(`document.querySelector('svg.lineage a.node[data-id=%q]').textContent`, id))
			if !strings.Contains(st, "suspended") {
				t.Fatalf("node %s reads %q, want suspended", id, st)
			}
		}
		if root := eval[string](t, ctx, `document.querySelector('svg.lineage a.root').textContent`); !strings.Contains(root, "retired") {
			t.Fatalf("root node reads %q, want retired", root)
		}
		if rc := text(t, ctx, "#story"); !strings.Contains(rc, "alice moved") || !strings.Contains(rc, "w 0.9") {
			t.Fatalf("story lacks the receipt's reason or the edge weight:\n%s", rc)
		}
		screenshot(t, ctx, "story.png")
	})

	t.Run("log status shows the signed checkpoint", func(t *testing.T) {
		// What custody verify records when it passes (cmd/custody's verify).
		rep, err := e.svc.Verify(e.ctx, custody.VerifyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := custody.WriteVerifyStatus(e.verified, custody.VerifyStatus{At: time.Now().UTC(), OK: true, Entries: rep.Entries, Logs: rep.Logs}); err != nil {
			t.Fatal(err)
		}
		run(t, ctx, "opening the log page", chromedp.Navigate(e.srv.URL+"/console/#log"))
		until(t, ctx, "the checkpoint", `!!document.querySelector('pre.checkpoint')`)
		if cp := text(t, ctx, "pre.checkpoint"); !strings.Contains(cp, "— ") {
			t.Fatalf("checkpoint has no signature line:\n%s", cp)
		}
		want, err := e.svc.VerifierKey("acme")
		if err != nil {
			t.Fatal(err)
		}
		if got := text(t, ctx, "pre.vkey"); strings.TrimSpace(got) != want {
			t.Fatalf("the log page shows verifier key %q, want %q", got, want)
		}
		atEverySize(t, ctx, "the log status")
		if got := text(t, ctx, "#log-body"); !strings.Contains(got, "passed") || !strings.Contains(got, fmt.Sprintf("covering %d of the", rep.Entries)) {
			t.Fatalf("the log page does not show the last verify's outcome:\n%s", got)
		}
	})

	t.Run("the token never leaves the Authorization header", func(t *testing.T) {
		if c := eval[string](t, ctx, "document.cookie"); c != "" {
			t.Fatalf("document.cookie = %q", c)
		}
		if n := eval[int](t, ctx, "localStorage.length"); n != 0 {
			t.Fatalf("the console wrote %d items to local storage, which outlives the tab", n)
		}
		if got := eval[string](t, ctx, "sessionStorage.getItem('custody.token')"); got != s.reviewer {
			t.Fatalf("the session holds %q, not the reviewer's token", got)
		}
		run(t, ctx, "signing out", chromedp.Click(chromedp.ID("signout")), chromedp.WaitVisible(chromedp.ID("token")))
		if n := eval[int](t, ctx, "sessionStorage.length"); n != 0 {
			t.Fatalf("after signing out the session still holds %d items", n)
		}
		e.mu.Lock()
		urls, cookies, auth := e.urls, e.cookies, e.authSeen
		e.mu.Unlock()
		if auth == 0 || !contains(urls, "/v1/review") {
			t.Fatalf("the recorder saw no authorized API call (%d); the check below would prove nothing", auth)
		}
		for _, tok := range []string{s.reviewer, s.owner} {
			secret := strings.TrimPrefix(tok, "cst_")
			if contains(urls, secret) {
				t.Fatalf("a token appears in a URL or Referer: %q", urls)
			}
			if contains(cookies, secret) {
				t.Fatalf("a token appears in a cookie: %q", cookies)
			}
			if strings.Contains(e.log.String(), secret) {
				t.Fatalf("a token appears in the server log")
			}
		}
		if !strings.Contains(e.log.String(), "principal=acme/rita") {
			t.Fatalf("the server log does not show the reviewer's requests; the log check would prove nothing")
		}
	})
}

// A thousand held items, each its own row, are read over two pages and all
// shown; the time the page took to draw them is logged (not asserted: the
// machine may be loaded).
func TestConsoleShowsAThousandItems(t *testing.T) {
	bctx := browser(t)
	e := newEnv(t)
	_, rev := e.principal("big", "rita", []string{"reviewer"})
	e.principal("big", "alice", []string{"user"})
	harness, _ := e.principal("big", "harness", []string{"agent"}, "tool:web")
	const n = 1000
	// One body is markup that would run script if the page inserted it as HTML.
	const markup = `<img src=x onerror="document.title='pwned'">`
	for i := range n {
		body := fmt.Sprintf("note %d", i)
		if i == 7 {
			body = markup
		}
		e.remember(harness, "alice", custody.Candidate{Namespace: "web", Class: "fact", Channel: "tool:web",
			Body: body, SourceRef: fmt.Sprintf("https://site.example/%d", i)})
	}
	ctx := tab(t, bctx)
	signIn(t, ctx, e.srv.URL, rev)
	until(t, ctx, "all items are read", fmt.Sprintf(`document.querySelector('#queue-rows').dataset.items === '%d'`, n))
	if rows := eval[int](t, ctx, `document.querySelectorAll('#queue-rows .row').length`); rows != n {
		t.Fatalf("rows = %d, want %d", rows, n)
	}
	if title := eval[string](t, ctx, "document.title"); !strings.HasPrefix(title, fmt.Sprintf("(%d)", n)) {
		t.Fatalf("title = %q", title)
	}
	if imgs := eval[int](t, ctx, `document.querySelectorAll('#queue-rows img').length`); imgs != 0 {
		t.Fatalf("a body was inserted as HTML: %d img elements", imgs)
	}
	if !eval[bool](t, ctx, fmt.Sprintf(`document.querySelector('#queue-rows').textContent.includes(%q)`, markup)) {
		t.Fatal("the markup body is not shown as text")
	}
	run(t, ctx, "moving down three rows", chromedp.KeyEvent(strings.Repeat("j", 3)))
	until(t, ctx, "the fourth row is selected", `document.querySelector('.row.selected').dataset.g === '3'`)
	t.Logf("the page drew %d rows in %s ms", n, eval[string](t, ctx, `document.querySelector('#queue-rows').dataset.renderMs`))
}
