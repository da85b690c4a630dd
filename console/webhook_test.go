package console_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/console"
)

type delivery struct {
	held console.Held
	sig  string
	body []byte
}

// The webhook posts a signed body for each held candidate, and none for an
// admitted one, retrying a failing receiver until it answers.
func TestWebhookSignsAndRetries(t *testing.T) {
	e := newEnv(t)
	var calls atomic.Int32
	got := make(chan delivery, 10)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if calls.Add(1) <= 2 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		var h console.Held
		if err := json.Unmarshal(body, &h); err != nil {
			t.Errorf("webhook body is not JSON: %v: %s", err, body)
		}
		got <- delivery{held: h, sig: r.Header.Get(console.SignatureHeader), body: body}
	}))
	defer recv.Close()
	secret := []byte("s3cret")
	wh := console.NewWebhook(recv.URL, secret, console.WebhookOptions{Backoff: time.Millisecond})
	e.svc.OnEvent(wh.Observe)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go wh.Run(ctx)

	alice, _ := e.principal("acme", "alice", []string{"user"})
	harness, _ := e.principal("acme", "harness", []string{"agent"}, "tool:email")
	held1 := e.remember(harness, "alice", custody.Candidate{Namespace: "bank", Class: "fact", Body: "ACCT-7777", Channel: "tool:email", SourceRef: "mail:1"})
	admitted := e.remember(alice, "", custody.Candidate{Namespace: "bank", Class: "fact", Body: "ACCT-1042", Channel: custody.ChannelUser})
	held2 := e.remember(harness, "alice", custody.Candidate{Namespace: "bank", Class: "fact", Body: "ACCT-6666", Channel: "tool:email", SourceRef: "mail:2"})
	if held1.State != custody.StateQuarantined || admitted.State != custody.StateAdmitted || held2.State != custody.StateQuarantined {
		t.Fatalf("seed: %s %s %s", held1.State, admitted.State, held2.State)
	}
	for _, want := range []string{held1.ID, held2.ID} {
		d := <-got
		if d.held.Record != want || d.held.Type != "review.held" || d.held.Tenant != "acme" || d.held.Channel != "tool:email" {
			t.Fatalf("delivery %+v, want record %s held", d.held, want)
		}
		if d.sig != console.Sign(secret, d.body) {
			t.Fatalf("signature %q does not match the body", d.sig)
		}
		if d.sig == console.Sign([]byte("other"), d.body) {
			t.Fatal("the signature does not depend on the secret")
		}
	}
	if n := calls.Load(); n != 4 {
		t.Fatalf("%d calls, want 4 (two failures retried, two deliveries)", n)
	}
}

// A receiver that hangs does not hold up writes: they all return, the
// events beyond the queue are dropped, and delivery resumes afterwards.
func TestWebhookNeverBlocksAWrite(t *testing.T) {
	e := newEnv(t)
	release := make(chan struct{})
	got := make(chan string, 10)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
		var h console.Held
		json.NewDecoder(r.Body).Decode(&h)
		got <- h.Record
	}))
	defer recv.Close()
	// No client timeout: the receiver is held for as long as the writes take.
	wh := console.NewWebhook(recv.URL, []byte("k"), console.WebhookOptions{Queue: 2, Backoff: time.Millisecond, Client: &http.Client{}})
	e.svc.OnEvent(wh.Observe)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go wh.Run(ctx)

	e.principal("acme", "alice", []string{"user"})
	harness, _ := e.principal("acme", "harness", []string{"agent"}, "tool:web")
	for i := range 6 {
		d := e.remember(harness, "alice", custody.Candidate{Namespace: "web", Class: "fact", Body: "page " + string(rune('a'+i)), Channel: "tool:web"})
		if d.State != custody.StateQuarantined {
			t.Fatalf("write %d: %s", i, d.State)
		}
	}
	// Six writes returned while the receiver held its first call: at most
	// one event is in flight and two queued, so at least three were dropped.
	if n := wh.Dropped(); n < 3 || n > 4 {
		t.Fatalf("dropped %d events, want 3 or 4", n)
	}
	close(release)
	// The kept events (the one in flight and the queued ones) go out...
	kept := 6 - int(wh.Dropped())
	for range kept {
		<-got
	}
	// ...and then a new one does too.
	held := e.remember(harness, "alice", custody.Candidate{Namespace: "web", Class: "fact", Body: "after", Channel: "tool:web"})
	if held.State != custody.StateQuarantined {
		t.Fatalf("write after release: %s", held.State)
	}
	if id := <-got; id != held.ID {
		t.Fatalf("after the backlog the webhook delivered %s, want the new %s", id, held.ID)
	}
}
