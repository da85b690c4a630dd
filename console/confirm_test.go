package console_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/custody-mem/custody/console"
)

// An approval the server answers with pending_confirmation (a sensitive
// key: its owner must confirm the change) says so. The API is a stand-in
// answering as a server that holds such approvals for the owner does.
func TestConsoleSaysTheOwnerMustConfirm(t *testing.T) {
	bctx := browser(t)
	var approved atomic.Bool
	mux := http.NewServeMux()
	mux.Handle(console.Prefix, console.Handler())
	mux.HandleFunc("GET /v1/me", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"tenant":"acme","name":"rita","roles":["reviewer"],"channels":[],"groups":[]}`))
	})
	mux.HandleFunc("GET /v1/review", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if approved.Load() {
			w.Write([]byte(`{"items":[],"next_cursor":""}`))
			return
		}
		w.Write([]byte(`{"items":[{"id":"R1","owner":"alice","namespace":"bank","key":"payee_account","class":"fact","body":"ACCT-2000",
			"channel":"tool:email","writer":"acme/harness","source_ref":"mail:9","authority":"external","audience":"owner","state":"quarantined",
			"created_at":"2026-01-01T00:00:00Z","expires_review_at":"2099-01-01T00:00:00Z","parents":[],
			"receipt":{"decision":"quarantined","rules":["sensitive-overwrite"],"reason":"held"},
			"sensitive":true,"proposed":{"old":"ACCT-1042","new":"ACCT-2000"}}],"next_cursor":""}`))
	})
	mux.HandleFunc("POST /v1/review/R1/approve", func(w http.ResponseWriter, r *http.Request) {
		approved.Store(true)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"R1","state":"pending_confirmation","authority":"confirmed"}`))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	ctx := tab(t, bctx)
	signIn(t, ctx, srv.URL, "cst_test")
	until(t, ctx, "the item", `document.querySelector('#queue-rows').dataset.items === '1'`)
	run(t, ctx, "a, Enter", chromedp.KeyEvent("a"))
	until(t, ctx, "the approval form", `document.activeElement.closest('.decide') !== null`)
	if form := text(t, ctx, ".decide"); !strings.Contains(form, "a sensitive key: it then waits for alice's confirmation") {
		t.Fatalf("the approval form does not warn of the owner's confirmation: %q", form)
	}
	run(t, ctx, "confirming", chromedp.Click(chromedp.CSS(".decide button[type=submit]")))
	until(t, ctx, "the queue is empty", `document.querySelector('#queue-rows').dataset.items === '0'`)
	if st := text(t, ctx, "#status"); !strings.Contains(st, "Approved 1 of 1.") || !strings.Contains(st, "the owner must still confirm it") {
		t.Fatalf("status = %q, want the owner's confirmation named", st)
	}
}
