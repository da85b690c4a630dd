// Package bodybudget bounds the bytes of request bodies a server holds at
// once, all requests together. A request's body is read through a Body,
// which takes from the server's Budget every byte before it reads it and
// gives all of them back when the request ends (Body.Release): what the
// handlers decode from the body lives as long as the request, so that is
// how long its bytes count. A read that would pass the budget fails with
// ErrExhausted, which the HTTP layer answers 503 with Retry-After: the
// server refuses more work rather than grow its memory without bound
// under concurrent large bodies (batches of a thousand candidates, say).
//
// Reads take the budget as they read, a chunk at a time (at most
// ReadChunk bytes): a body is charged for what was read, never for what
// its Content-Length claims, and a request is refused at the chunk that
// would pass the budget, however its body arrives (in one piece or
// chunked).
package bodybudget

import (
	"errors"
	"io"
	"sync/atomic"
)

// ReadChunk is the most a Body takes from the budget for one read.
const ReadChunk = 32 << 10

// ErrExhausted is a read's error when the bytes held by requests would
// pass the budget.
var ErrExhausted = errors.New("the server is reading as many request bytes as it allows at once")

// Budget is the bytes all requests' bodies may hold at once. The zero
// value holds nothing; see New.
type Budget struct {
	max     int64
	held    atomic.Int64
	refused atomic.Int64
}

// New returns a budget of max bytes.
func New(max int64) *Budget { return &Budget{max: max} }

// Max is the budget's size.
func (b *Budget) Max() int64 { return b.max }

// Held is the bytes the bodies being read hold now.
func (b *Budget) Held() int64 { return b.held.Load() }

// Refused counts the reads refused since the budget was made.
func (b *Budget) Refused() int64 { return b.refused.Load() }

// take holds n more bytes, unless that would pass max.
func (b *Budget) take(n int64) bool {
	for {
		h := b.held.Load()
		if h+n > b.max {
			b.refused.Add(1)
			return false
		}
		if b.held.CompareAndSwap(h, h+n) {
			return true
		}
	}
}

func (b *Budget) give(n int64) { b.held.Add(-n) }

// Body is a request body read against a budget.
type Body struct {
	io.ReadCloser
	b    *Budget
	held int64
	over bool
}

// Wrap reads body against b.
func (b *Budget) Wrap(body io.ReadCloser) *Body { return &Body{ReadCloser: body, b: b} }

// Read reads at most ReadChunk bytes and takes them from the budget: a
// read that would pass it fails with ErrExhausted (and so does every read
// after). A read that waits for the client holds nothing meanwhile, so
// slow clients do not use up the budget.
func (r *Body) Read(p []byte) (int, error) {
	if r.over {
		return 0, ErrExhausted
	}
	if len(p) > ReadChunk {
		p = p[:ReadChunk]
	}
	n, err := r.ReadCloser.Read(p)
	if n > 0 && !r.b.take(int64(n)) {
		r.over = true
		return 0, ErrExhausted
	}
	r.held += int64(n)
	return n, err
}

// Release gives back every byte the body holds; the request has ended.
func (r *Body) Release() {
	r.b.give(r.held)
	r.held = 0
}

// Exhausted reports whether a read of the body was refused.
func (r *Body) Exhausted() bool { return r.over }
