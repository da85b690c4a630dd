// Package embed turns text into vectors for custody's semantic search.
//
// An Embedder maps texts to unit-length vectors of a fixed dimension, all
// made by one model whose id is stored with every vector, so that vectors of
// different models are never compared. Three providers are here: Builtin,
// an offline embedder over a compacted WordNet 3.0 that needs no network
// and no model download (the default); Glove, as offline, over GloVe word
// vectors compacted to int8, which scores a record word by word against
// the query; and OpenAI, a client of the OpenAI-compatible POST
// /v1/embeddings protocol (OpenAI, Ollama, vLLM, llama.cpp server, LM
// Studio, TEI).
//
// Vectors are derived data: custody computes them after a write commits,
// never on the write's path, and search falls back to lexical ranking when
// the embedder fails. A static embedder's (Static: Builtin) are not
// stored at all: a search scores its candidates from their texts.
package embed

//go:generate go run ./internal/gen -dict /usr/share/wordnet -out wordnet.gz

import (
	"context"
	"fmt"
	"math"
	"os"
	"time"
)

// Embedder computes vectors for texts.
type Embedder interface {
	// Embed returns one vector of Dim() float32s per text, in order, each
	// of unit length (cosine similarity is the dot product).
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Model identifies the model and its settings; vectors of different
	// models are never compared.
	Model() string
	// Dim is the length of every vector.
	Dim() int
}

// Provider names, as --embedder takes them.
const (
	ProviderBuiltin = "builtin"
	ProviderGlove   = "glove"
	ProviderOpenAI  = "openai"
	ProviderNone    = "none"
)

// ProviderDefault is the embedder of a Config that names none, and of
// serve without --embedder: glove, offline, found better than builtin at
// every k on both LoCoMo development conversations and on the eight
// held out (docs/benchmarks.md).
const ProviderDefault = ProviderGlove

// APIKeyEnv is the environment variable the openai provider reads its API
// key from (sent as a bearer token; unset: no Authorization header).
const APIKeyEnv = "CUSTODY_EMBEDDER_API_KEY"

// Config selects and configures an embedder; the zero value is the
// default one (ProviderDefault).
type Config struct {
	Provider string // glove (the default), builtin, openai or none
	URL      string // openai: base URL, e.g. http://localhost:11434/v1
	Model    string // openai: model name
	Dim      int    // builtin: vector length (default DefaultBuiltinDim); glove: 0 (the table's); openai: requested dimensions (0: the model's own)
	APIKey   string // openai: bearer token; New fills it from APIKeyEnv when empty
	// Timeout bounds one HTTP request (default DefaultTimeout); Retries is
	// how often a timed-out, 429 or 5xx request is tried again (default
	// DefaultRetries; negative: never), with exponential backoff from
	// Backoff (default DefaultBackoff); Batch is the most texts per request
	// (default DefaultBatch).
	Timeout time.Duration
	Retries int
	Backoff time.Duration
	Batch   int
}

// New returns the embedder cfg describes, or nil for provider none.
func New(cfg Config) (Embedder, error) {
	if cfg.Provider == "" {
		cfg.Provider = ProviderDefault
	}
	switch cfg.Provider {
	case ProviderBuiltin:
		return NewBuiltin(cfg.Dim)
	case ProviderGlove:
		if cfg.Dim != 0 {
			return nil, fmt.Errorf("glove embedder: its vectors have the table's dimension, not %d: leave the dimension unset", cfg.Dim)
		}
		return NewGlove()
	case ProviderOpenAI:
		if cfg.APIKey == "" {
			cfg.APIKey = os.Getenv(APIKeyEnv)
		}
		return NewOpenAI(cfg)
	case ProviderNone:
		return nil, nil
	}
	return nil, fmt.Errorf("embedder %q is not known: use glove, builtin, openai or none", cfg.Provider)
}

// normalize scales v to unit length in place (a zero vector stays zero).
func normalize(v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return
	}
	k := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= k
	}
}

// Dot is the dot product of two vectors of the same length (the cosine
// similarity of unit vectors).
func Dot(a, b []float32) float32 {
	if len(a) != len(b) {
		return 0
	}
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}
