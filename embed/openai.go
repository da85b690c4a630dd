package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// Defaults for the openai provider.
const (
	DefaultTimeout = 10 * time.Second
	DefaultRetries = 3
	DefaultBackoff = 200 * time.Millisecond
	DefaultBatch   = 64
)

// OpenAI embeds through an OpenAI-compatible POST {URL}/embeddings:
// request {"model", "input": [...], "dimensions"?}, response
// {"data": [{"index", "embedding"}]}. Requests carry at most Batch texts;
// a request that times out or answers 429 or 5xx is tried again with
// exponential backoff (honouring Retry-After up to 30 s), other errors
// fail at once.
type OpenAI struct {
	cfg    Config
	url    string
	client *http.Client
	dim    atomic.Int64
}

// NewOpenAI checks cfg and returns the provider. With cfg.Dim 0 the
// model's own dimension is learnt from its first answer.
func NewOpenAI(cfg Config) (*OpenAI, error) {
	if cfg.URL == "" {
		return nil, errors.New("openai embedder: no base URL: set --embedder-url (e.g. https://api.openai.com/v1 or http://localhost:11434/v1)")
	}
	if !strings.HasPrefix(cfg.URL, "http://") && !strings.HasPrefix(cfg.URL, "https://") {
		return nil, fmt.Errorf("openai embedder: base URL %q is not http(s)", cfg.URL)
	}
	if cfg.Model == "" {
		return nil, errors.New("openai embedder: no model: set --embedder-model (e.g. text-embedding-3-small)")
	}
	if cfg.Dim < 0 {
		return nil, fmt.Errorf("openai embedder: dimension %d is negative", cfg.Dim)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Retries == 0 {
		cfg.Retries = DefaultRetries
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = DefaultBackoff
	}
	if cfg.Batch <= 0 {
		cfg.Batch = DefaultBatch
	}
	o := &OpenAI{cfg: cfg, url: strings.TrimSuffix(cfg.URL, "/") + "/embeddings", client: &http.Client{}}
	o.dim.Store(int64(cfg.Dim))
	return o, nil
}

// Model is "openai:" and the model name, and the requested dimension when
// one was set.
func (o *OpenAI) Model() string {
	if o.cfg.Dim > 0 {
		return fmt.Sprintf("openai:%s:%d", o.cfg.Model, o.cfg.Dim)
	}
	return "openai:" + o.cfg.Model
}

// Dim is the requested dimension, or the one of the model's answers (0
// before the first).
func (o *OpenAI) Dim() int { return int(o.dim.Load()) }

// Embed sends texts in batches and returns their vectors, normalised.
func (o *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for len(texts) > 0 {
		n := min(len(texts), o.cfg.Batch)
		vs, err := o.batch(ctx, texts[:n])
		if err != nil {
			return nil, err
		}
		out = append(out, vs...)
		texts = texts[n:]
	}
	return out, nil
}

type embeddingRequest struct {
	Model      string   `json:"model"`
	Input      []string `json:"input"`
	Dimensions int      `json:"dimensions,omitempty"`
}

type embeddingResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

// retryable is an answer worth asking again.
type retryable struct {
	err   error
	after time.Duration
}

func (r *retryable) Error() string { return r.err.Error() }
func (r *retryable) Unwrap() error { return r.err }

func (o *OpenAI) batch(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(embeddingRequest{Model: o.cfg.Model, Input: texts, Dimensions: o.cfg.Dim})
	if err != nil {
		return nil, err
	}
	wait := o.cfg.Backoff
	for attempt := 0; ; attempt++ {
		vs, err := o.post(ctx, body, len(texts))
		var rt *retryable
		if err == nil || !errors.As(err, &rt) || attempt >= o.cfg.Retries || ctx.Err() != nil {
			if err != nil {
				return nil, fmt.Errorf("openai embedder %s: %w", o.url, err)
			}
			return vs, nil
		}
		d := max(wait, min(rt.after, 30*time.Second))
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("openai embedder %s: %w (after %v)", o.url, ctx.Err(), err)
		case <-t.C:
		}
		wait *= 2
	}
}

func (o *OpenAI) post(ctx context.Context, body []byte, n int) ([][]float32, error) {
	rctx, cancel := context.WithTimeout(ctx, o.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, o.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if o.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.cfg.APIKey)
	}
	resp, err := o.client.Do(req)
	if err != nil {
		if ctx.Err() == nil { // the request's own timeout, or the network
			return nil, &retryable{err: err}
		}
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, &retryable{err: err}
	}
	if resp.StatusCode != http.StatusOK {
		err := fmt.Errorf("status %d: %s", resp.StatusCode, snippet(data))
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
			after, _ := time.ParseDuration(resp.Header.Get("Retry-After") + "s")
			return nil, &retryable{err: err, after: after}
		}
		return nil, err
	}
	var er embeddingResponse
	if err := json.Unmarshal(data, &er); err != nil {
		return nil, fmt.Errorf("answer is not an embeddings response: %w", err)
	}
	if len(er.Data) != n {
		return nil, fmt.Errorf("answer has %d embeddings for %d inputs", len(er.Data), n)
	}
	out := make([][]float32, n)
	for _, d := range er.Data {
		if d.Index < 0 || d.Index >= n || out[d.Index] != nil {
			return nil, fmt.Errorf("answer has a bad or repeated index %d", d.Index)
		}
		if dim := o.Dim(); len(d.Embedding) == 0 || (dim > 0 && len(d.Embedding) != dim) {
			return nil, fmt.Errorf("answer has an embedding of %d floats, want %d (check --embedder-dim)", len(d.Embedding), dim)
		}
		normalize(d.Embedding)
		out[d.Index] = d.Embedding
	}
	o.dim.CompareAndSwap(0, int64(len(out[0])))
	return out, nil
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
