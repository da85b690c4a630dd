package embed_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/custody-mem/custody/embed"
)

// fakeProvider speaks the OpenAI embeddings protocol: a text's vector is
// (len(text), 1, 0), answered in reverse index order. fail, if set, may
// answer a request itself (its number, from 1) instead.
type fakeProvider struct {
	mu       sync.Mutex
	requests []map[string]any
	auth     []string
	fail     func(n int, w http.ResponseWriter, r *http.Request) bool
}

func (f *fakeProvider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	var req map[string]any
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.requests = append(f.requests, req)
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	n := len(f.requests)
	f.mu.Unlock()
	if f.fail != nil && f.fail(n, w, r) {
		return
	}
	inputs, _ := req["input"].([]any)
	type item struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	var data []item
	for i := len(inputs) - 1; i >= 0; i-- {
		s, _ := inputs[i].(string)
		data = append(data, item{Index: i, Embedding: []float32{float32(len(s)), 1, 0}})
	}
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req["model"]})
}

func (f *fakeProvider) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

func newOpenAI(t *testing.T, f *fakeProvider, cfg embed.Config) *embed.OpenAI {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	cfg.URL = srv.URL + "/v1"
	if cfg.Model == "" {
		cfg.Model = "test-embed"
	}
	if cfg.Backoff == 0 {
		cfg.Backoff = time.Millisecond
	}
	o, err := embed.NewOpenAI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestOpenAIProtocol(t *testing.T) {
	f := &fakeProvider{}
	o := newOpenAI(t, f, embed.Config{Batch: 2, Dim: 3, APIKey: "sk-test"})
	texts := []string{"a", "bbb", "cc", "dddd", "eeeee"}
	vs, err := o.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := f.count(), 3; got != want {
		t.Errorf("%d requests for 5 texts in batches of 2, want %d", got, want)
	}
	for i, v := range vs {
		// (len, 1, 0) normalised: the order of the answer's indexes, not of its items.
		if got, want := v[0]/v[1], float32(len(texts[i])); got < want-0.001 || got > want+0.001 {
			t.Errorf("vector %d = %v, not text %q's", i, v, texts[i])
		}
		if d := embed.Dot(v, v); d < 0.999 || d > 1.001 {
			t.Errorf("vector %d is not unit length (|v|² = %f)", i, d)
		}
	}
	req := f.requests[0]
	if req["model"] != "test-embed" || req["dimensions"] != float64(3) || len(req["input"].([]any)) != 2 {
		t.Errorf("request = %v, want model, dimensions 3 and two inputs", req)
	}
	if f.auth[0] != "Bearer sk-test" {
		t.Errorf("Authorization = %q, want the API key as a bearer token", f.auth[0])
	}
	if got, want := o.Model(), "openai:test-embed:3"; got != want {
		t.Errorf("Model = %q, want %q", got, want)
	}
}

func TestOpenAIRetries(t *testing.T) {
	for _, status := range []int{http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway} {
		f := &fakeProvider{fail: func(n int, w http.ResponseWriter, r *http.Request) bool {
			if n <= 2 {
				w.Header().Set("Retry-After", "0")
				http.Error(w, "busy", status)
				return true
			}
			return false
		}}
		o := newOpenAI(t, f, embed.Config{})
		if _, err := o.Embed(context.Background(), []string{"x"}); err != nil {
			t.Errorf("status %d twice, then success: %v", status, err)
		}
		if got, want := f.count(), 3; got != want {
			t.Errorf("status %d: %d requests, want %d", status, got, want)
		}
	}
}

// TestOpenAITimeout: a request that gets no answer within the timeout is
// abandoned and tried again.
func TestOpenAITimeout(t *testing.T) {
	f := &fakeProvider{fail: func(n int, w http.ResponseWriter, r *http.Request) bool {
		if n == 1 {
			<-r.Context().Done() // hangs until the client gives up
			return true
		}
		return false
	}}
	o := newOpenAI(t, f, embed.Config{Timeout: 50 * time.Millisecond})
	if _, err := o.Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatalf("a hung request then an answer: %v", err)
	}
	if got, want := f.count(), 2; got != want {
		t.Errorf("%d requests, want %d", got, want)
	}
}

func TestOpenAIFailing(t *testing.T) {
	down := &fakeProvider{fail: func(int, http.ResponseWriter, *http.Request) bool { panic(http.ErrAbortHandler) }}
	o := newOpenAI(t, down, embed.Config{Retries: 2})
	if _, err := o.Embed(context.Background(), []string{"x"}); err == nil {
		t.Fatal("a provider that drops every connection gave vectors")
	}
	if got, want := down.count(), 3; got != want {
		t.Errorf("%d requests, want 1 and 2 retries", got)
	}
	bad := &fakeProvider{fail: func(_ int, w http.ResponseWriter, _ *http.Request) bool {
		http.Error(w, `{"error":{"message":"unknown model"}}`, http.StatusBadRequest)
		return true
	}}
	o = newOpenAI(t, bad, embed.Config{})
	_, err := o.Embed(context.Background(), []string{"x"})
	if err == nil || !strings.Contains(err.Error(), "unknown model") {
		t.Errorf("400 = %v, want the provider's message", err)
	}
	if got := bad.count(); got != 1 {
		t.Errorf("a 400 was sent %d times, want once (not retried)", got)
	}
	short := &fakeProvider{fail: func(_ int, w http.ResponseWriter, _ *http.Request) bool {
		w.Write([]byte(`{"data":[{"index":0,"embedding":[1,0]}]}`))
		return true
	}}
	o = newOpenAI(t, short, embed.Config{Dim: 3})
	if _, err := o.Embed(context.Background(), []string{"x"}); err == nil {
		t.Error("an embedding of the wrong dimension accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o = newOpenAI(t, &fakeProvider{}, embed.Config{})
	if _, err := o.Embed(ctx, []string{"x"}); err == nil {
		t.Error("a cancelled context gave vectors")
	}
}
