package console_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/console"
	"github.com/custody-mem/custody/httpapi"
)

// Every console page and file carries the restrictive headers, without a
// token; the API beside it still wants one.
func TestConsolePagesSetSecurityHeaders(t *testing.T) {
	e := newEnv(t)
	for _, path := range []string{"/console/", "/console/console.js", "/console/story.js", "/console/console.css"} {
		resp, err := http.Get(e.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || len(body) == 0 {
			t.Fatalf("GET %s: %d, %d bytes", path, resp.StatusCode, len(body))
		}
		csp := resp.Header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'self'", "script-src 'self';", "frame-ancestors 'none'", "object-src 'none'"} {
			if !strings.Contains(csp, want) {
				t.Fatalf("GET %s: CSP %q lacks %q", path, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
			t.Fatalf("GET %s: CSP %q allows inline script", path, csp)
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("Referrer-Policy") != "no-referrer" {
			t.Fatalf("GET %s: headers %v", path, resp.Header)
		}
		if resp.Header.Get("Set-Cookie") != "" {
			t.Fatalf("GET %s sets a cookie", path)
		}
		if path == "/console/" && (strings.Contains(string(body), "<script>") || strings.Contains(string(body), " style=")) {
			t.Fatalf("the page has inline script or style, which its CSP would block")
		}
	}
	// /console redirects to /console/; POST is refused; no directory lists.
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(e.srv.URL + "/console")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 3 || resp.Header.Get("Location") != console.Prefix {
		t.Fatalf("GET /console: %d to %q, want a redirect to /console/", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, err = http.Post(e.srv.URL+"/console/", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || !strings.Contains(string(b), `"code":"method_not_allowed"`) {
		t.Fatalf("POST /console/: %d %s", resp.StatusCode, b)
	}
	for _, path := range []string{"/console/nope.js", "/console/assets/", "/console/../go.mod"} {
		resp, err := http.Get(e.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(b), `"code":"not_found"`) {
			t.Fatalf("GET %s: %d %s, want the JSON 404", path, resp.StatusCode, b)
		}
	}
	if st := e.call("", "GET", "/v1/review", nil, nil); st != http.StatusUnauthorized {
		t.Fatalf("GET /v1/review without a token: %d, want 401", st)
	}
}

// A review item says when the sweep rejects it: its creation plus the
// review time.
func TestReviewItemsSayWhenTheyExpire(t *testing.T) {
	e := newEnv(t)
	_, rev := e.principal("acme", "rita", []string{"reviewer"})
	harness, _ := e.principal("acme", "harness", []string{"agent"}, "tool:web")
	e.principal("acme", "alice", []string{"user"})
	d := e.remember(harness, "alice", custody.Candidate{Namespace: "notes", Class: "fact", Body: "x", Channel: "tool:web"})
	var q httpapi.ReviewResponse
	if st := e.call(rev, "GET", "/v1/review", nil, &q); st != 200 || len(q.Items) != 1 || q.Items[0].ID != d.ID {
		t.Fatalf("review queue: %d %+v", st, q.Items)
	}
	it := q.Items[0]
	if want := it.CreatedAt.Add(custody.DefaultReviewTTL); !it.ExpiresReviewAt.Equal(want) {
		t.Fatalf("expires_review_at = %s, want created_at + %s = %s", it.ExpiresReviewAt, custody.DefaultReviewTTL, want)
	}
	if it.ExpiresReviewAt.Before(time.Now()) {
		t.Fatalf("a fresh item already expired: %s", it.ExpiresReviewAt)
	}
}
