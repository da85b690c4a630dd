package main

import (
	"flag"
	"fmt"
	"log/slog"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/embed"
)

// embedderFlags choose the embedder of semantic search (docs/search.md).
type embedderFlags struct {
	provider, url, model string
	dim                  int
	timeout              time.Duration
}

func (f *embedderFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.provider, "embedder", embed.ProviderDefault, "`provider` of semantic and hybrid search: glove (offline, GloVe word vectors and WordNet, scored word by word), builtin (offline, WordNet random indexing), openai (any OpenAI-compatible POST /v1/embeddings) or none (lexical search only)")
	fs.StringVar(&f.url, "embedder-url", "", "openai: base `URL` of the API, e.g. https://api.openai.com/v1 or http://localhost:11434/v1 (the API key is read from $"+embed.APIKeyEnv+")")
	fs.StringVar(&f.model, "embedder-model", "", "openai: embedding `model`, e.g. text-embedding-3-small")
	fs.IntVar(&f.dim, "embedder-dim", 0, "vector `dimension` (builtin: default 512; openai: the model's own unless set)")
	fs.DurationVar(&f.timeout, "embedder-timeout", embed.DefaultTimeout, "openai: how long one request may take before it is tried again")
}

// embedder is the embedder the flags name (nil for none).
func (f *embedderFlags) embedder() (embed.Embedder, error) {
	e, err := embed.New(embed.Config{Provider: f.provider, URL: f.url, Model: f.model, Dim: f.dim, Timeout: f.timeout})
	if err != nil {
		return nil, usageError{fmt.Sprintf("--embedder: %v", err)}
	}
	return e, nil
}

// startEmbedding runs the service's embedding worker, logging its
// failures (it retries on its own); nil without an embedder or with an
// offline one (glove, builtin), which stores no vectors.
func startEmbedding(svc *custody.Service, logger *slog.Logger) *custody.EmbedWorker {
	return svc.StartEmbedding(custody.EmbedWorkerOptions{OnError: func(err error) {
		logger.Warn("embedding: vectors are behind; semantic search misses the newest records until the embedder answers", "err", err)
	}})
}
