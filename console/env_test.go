package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/console"
	"github.com/custody-mem/custody/httpapi"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/tlog"
)

// env is a real custody server (httpapi over a SQLite file) on loopback,
// with the console mounted as custody serve mounts it. It records every
// request's URL and cookies and keeps the server log, so tests can check
// where the token went.
type env struct {
	t   testing.TB
	ctx context.Context
	svc *custody.Service
	srv *httptest.Server
	// verified is the store's verify status file (custody verify writes it).
	verified string
	log      *lockedBuffer

	mu       sync.Mutex
	urls     []string
	cookies  []string
	authSeen int // requests that carried an Authorization header
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newEnv(t testing.TB) *env {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	store, err := sqlite.Open(ctx, filepath.Join(dir, "c.db"))
	if err != nil {
		t.Fatalf("sqlite.Open: %v", err)
	}
	key, _, err := tlog.LoadOrCreateServerKey(filepath.Join(dir, "server.key"))
	if err != nil {
		t.Fatalf("LoadOrCreateServerKey: %v", err)
	}
	verified := filepath.Join(dir, "c.db.verified")
	svc, err := custody.New(store, key, custody.Options{VerifyStatusFile: verified})
	if err != nil {
		t.Fatalf("custody.New: %v", err)
	}
	e := &env{t: t, ctx: ctx, svc: svc, log: &lockedBuffer{}, verified: verified}
	api := httpapi.New(svc, httpapi.Options{Logger: slog.New(slog.NewTextHandler(e.log, nil)), RatePerSecond: -1})
	api.MountPublic(console.Prefix, console.Handler())
	h := api.Handler()
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.urls = append(e.urls, r.URL.String(), r.Header.Get("Referer"))
		e.cookies = append(e.cookies, r.Header.Values("Cookie")...)
		if r.Header.Get("Authorization") != "" {
			e.authSeen++
		}
		e.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	if _, err := svc.CheckpointAll(ctx); err != nil {
		t.Fatalf("Checkpoint: %v", err)
	}
	t.Cleanup(func() {
		e.srv.Close()
		store.Close()
	})
	return e
}

// principal creates a principal and returns it with its token.
func (e *env) principal(tenant, name string, roles []string, channels ...string) (*custody.Principal, string) {
	e.t.Helper()
	p, tok, err := e.svc.AddPrincipal(e.ctx, custody.PrincipalInput{Tenant: tenant, Name: name, Roles: roles, Channels: channels})
	if err != nil {
		e.t.Fatalf("AddPrincipal %s/%s: %v", tenant, name, err)
	}
	return p, tok
}

// remember writes a candidate as p for subject and returns the decision.
func (e *env) remember(p *custody.Principal, subject string, in custody.Candidate) *custody.Decision {
	e.t.Helper()
	c, err := e.svc.Act(e.ctx, p, subject)
	if err != nil {
		e.t.Fatalf("Act %s for %q: %v", p.Name, subject, err)
	}
	d, err := e.svc.Remember(e.ctx, c, in)
	if err != nil {
		e.t.Fatalf("Remember %+v: %v", in, err)
	}
	return d
}

// call sends an API request with token and decodes a JSON answer into out
// (when not nil); it returns the status.
func (e *env) call(token, method, path string, body, out any) int {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(b, out); err != nil {
			e.t.Fatalf("%s %s: answer is not JSON: %v: %s", method, path, err, b)
		}
	}
	return resp.StatusCode
}

// record is the record as a reviewer's lineage call sees it.
func (e *env) record(reviewerToken, id string) *custody.Record {
	e.t.Helper()
	var l custody.Lineage
	if st := e.call(reviewerToken, "GET", "/v1/memories/"+id+"/lineage", nil, &l); st != 200 {
		e.t.Fatalf("lineage of %s: status %d", id, st)
	}
	return l.Record
}

// state is the record's state as a reviewer sees it.
func (e *env) state(reviewerToken, id string) custody.State {
	e.t.Helper()
	return e.record(reviewerToken, id).State
}

// browser starts headless Chromium and returns a context for a fresh tab
// factory. Without chromium the test skips, unless CI=true: then it fails.
func browser(t *testing.T) context.Context {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("chromium is not installed (apt-get install -y chromium); CI=true needs the browser tests to run")
		}
		t.Skip("chromium is not installed; install it (apt-get install -y chromium) to run the browser tests")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1200, 900),
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	axeSource(t) // every browser test runs axe-core too
	return bctx
}

// tab opens a fresh tab (its own session storage) of the browser.
func tab(t *testing.T, bctx context.Context) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(bctx)
	t.Cleanup(cancel)
	// A step that waits for what never comes (a click on a button that is
	// not there) fails the test instead of hanging it.
	ctx, stop := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(stop)
	return ctx
}

// run runs browser actions, failing the test with what was being done.
func run(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// signIn opens the console of the server at base and signs in with token, typed and
// submitted with Enter.
func signIn(t *testing.T, ctx context.Context, base, token string) {
	t.Helper()
	run(t, ctx, "signing in",
		chromedp.Navigate(base+"/console/"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), token+kb.Enter), // the keyboard alone

		chromedp.WaitVisible(chromedp.ID("signout")),
	)
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// until waits until the JavaScript expression cond is true in the page.
func until(t *testing.T, ctx context.Context, what, cond string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](cond, chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(15*time.Second))); err != nil {
		body, _ := chromedp.Run(ctx, chromedp.Evaluate[string]("document.body.innerText"))
		t.Fatalf("waiting until %s: %v\npage:\n%s", what, err, body)
	}
}

// contains reports whether any of ss contains sub.
func contains(ss []string, sub string) bool {
	for _, s := range ss {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// text returns the visible text of the first element matching the CSS
// selector sel.
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("reading %s: %v", sel, err)
	}
	return s
}
