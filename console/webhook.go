package console

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	custody "github.com/custody-mem/custody"
)

// Webhook defaults.
const (
	DefaultWebhookAttempts = 6
	DefaultWebhookBackoff  = time.Second
	DefaultWebhookMaxWait  = time.Minute
	DefaultWebhookQueue    = 1024
	DefaultWebhookTimeout  = 10 * time.Second
)

// SignatureHeader carries "sha256=" and the hex HMAC-SHA256 of the body
// under the webhook's secret.
const SignatureHeader = "X-Custody-Signature"

// WebhookOptions tune a Webhook; zero values take the defaults.
type WebhookOptions struct {
	Attempts int           // deliveries tried per event before it is dropped
	Backoff  time.Duration // the wait after the first failure; doubled after each next one
	MaxWait  time.Duration // the longest wait between attempts
	Queue    int           // events held while the receiver is slow; more are dropped
	Client   *http.Client  // default: one with DefaultWebhookTimeout
	Logger   *slog.Logger
}

// Held is the body of a webhook call: a candidate was held for review.
type Held struct {
	Type       string    `json:"type"` // "review.held"
	Tenant     string    `json:"tenant"`
	Record     string    `json:"record"`
	Channel    string    `json:"channel"`
	Class      string    `json:"class"`
	Transition string    `json:"transition"`
	Time       time.Time `json:"time"`
}

// Webhook posts a signed Held to a URL each time a candidate enters
// quarantine. Observe never blocks the write that caused it: events wait
// in a bounded queue for Run, which delivers them one by one, retrying
// failures (network errors, 429 and 5xx) with exponential backoff.
type Webhook struct {
	url     string
	secret  []byte
	opts    WebhookOptions
	queue   chan Held
	dropped atomic.Int64
}

// NewWebhook returns a Webhook posting to url, signing with secret.
func NewWebhook(url string, secret []byte, opts WebhookOptions) *Webhook {
	if opts.Attempts <= 0 {
		opts.Attempts = DefaultWebhookAttempts
	}
	if opts.Backoff <= 0 {
		opts.Backoff = DefaultWebhookBackoff
	}
	if opts.MaxWait <= 0 {
		opts.MaxWait = DefaultWebhookMaxWait
	}
	if opts.Queue <= 0 {
		opts.Queue = DefaultWebhookQueue
	}
	if opts.Client == nil {
		opts.Client = &http.Client{Timeout: DefaultWebhookTimeout}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Webhook{url: url, secret: secret, opts: opts, queue: make(chan Held, opts.Queue)}
}

// Observe is the service hook (Service.OnEvent): it queues a Held for each
// record that entered quarantine, and drops it when the queue is full.
func (w *Webhook) Observe(e custody.Event) {
	if e.Decision != string(custody.StateQuarantined) || e.Record == "" {
		return
	}
	h := Held{Type: "review.held", Tenant: e.Tenant, Record: e.Record, Channel: e.Channel, Class: string(e.Class),
		Transition: e.Action, Time: time.Now().UTC()}
	select {
	case w.queue <- h:
	default:
		if n := w.dropped.Add(1); n == 1 || n%100 == 0 {
			w.opts.Logger.Warn("review webhook: queue full, events dropped", "dropped", n)
		}
	}
}

// Dropped is the number of events dropped because the queue was full.
func (w *Webhook) Dropped() int64 { return w.dropped.Load() }

// Run delivers queued events until ctx ends.
func (w *Webhook) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case h := <-w.queue:
			w.deliver(ctx, h)
		}
	}
}

// Sign returns the SignatureHeader value of body under secret.
func Sign(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// deliver posts h, retrying with backoff; it gives up after the attempts
// or on an answer that retrying cannot change (4xx other than 429).
func (w *Webhook) deliver(ctx context.Context, h Held) {
	body, err := json.Marshal(h)
	if err != nil {
		w.opts.Logger.Error("review webhook: encoding the event", "err", err)
		return
	}
	wait := w.opts.Backoff
	for attempt := 1; ; attempt++ {
		retry, err := w.post(ctx, body)
		if err == nil {
			return
		}
		if !retry || attempt == w.opts.Attempts {
			w.opts.Logger.Warn("review webhook: giving up on an event", "record", h.Record, "attempts", attempt, "err", err)
			return
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(2*wait, w.opts.MaxWait)
	}
}

func (w *Webhook) post(ctx context.Context, body []byte) (retry bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(SignatureHeader, Sign(w.secret, body))
	resp, err := w.opts.Client.Do(req)
	if err != nil {
		return true, err
	}
	resp.Body.Close()
	switch {
	case resp.StatusCode < 300:
		return false, nil
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return true, fmt.Errorf("the receiver answered %s", resp.Status)
	}
	return false, fmt.Errorf("the receiver answered %s; fix the URL or the receiver", resp.Status)
}
