package client

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/custody-mem/custody/tlog"
	"github.com/custody-mem/custody/witness"
	"golang.org/x/mod/sumdb/note"
)

// ErrLogInconsistent is returned by Pin.Checkpoint when the server's log is
// not an extension of the checkpoint pinned earlier: it is smaller, has
// another root at the same size, or no consistency proof links the two.
// The server's store was rolled back or its history rewritten.
var ErrLogInconsistent = errors.New("the server's log is not an extension of the checkpoint pinned earlier")

// Pin holds the newest checkpoint of a server's log that a client has
// verified, and holds the server to it: every checkpoint fetched after must
// be signed by the server's key and extend the pinned one, as a consistency
// proof from the server shows (RFC 6962). A server whose store was rolled
// back or rewritten after the pin is caught by the first check after.
//
// Save Note between runs and give it to NewPin, so the pin outlives the
// process; the saved note is also a checkpoint custody verify --checkpoint
// takes. A Pin is safe for concurrent use.
type Pin struct {
	c        *Client
	verifier note.Verifier
	opts     PinOptions

	mu   sync.Mutex
	cp   *tlog.Checkpoint // nil until the first checkpoint
	note []byte
}

// ErrNotWitnessed is returned by Pin.Checkpoint when the server's
// checkpoint does not meet the witness policy of PinOptions: too few of
// the policy's witnesses cosigned it, or their cosignatures are older
// than MaxAge (a server frozen on an old checkpoint).
var ErrNotWitnessed = errors.New("the server's checkpoint does not meet the witness policy")

// DefaultMaxAge is how old the cosignatures a witness policy counts may
// be: a server refreshes them hourly (witness.DefaultRefresh) even when
// its log does not grow.
const DefaultMaxAge = 24 * time.Hour

// PinOptions configure a Pin. The zero value accepts every checkpoint
// signed by the log's key.
type PinOptions struct {
	// Policy, if set, is the C2SP witness policy a checkpoint must meet
	// to be accepted (witness.ParsePolicy): with a policy, the server
	// answers its current checkpoint, the newest one that met its own.
	Policy *witness.Policy
	// MaxAge bounds the age of the cosignatures that count toward the
	// policy (default DefaultMaxAge; negative: any age).
	MaxAge time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// NewPin returns a pin of c's server log. verifierKey is the text form of
// the key that verifies its checkpoints ("<origin>+<hash>+<key>", as
// custody serve prints it); the key's name is the log's origin. saved, if
// not empty, is a checkpoint pinned earlier (Note): it must verify under
// the key.
func NewPin(c *Client, verifierKey string, saved []byte) (*Pin, error) {
	return NewPinWith(c, verifierKey, saved, PinOptions{})
}

// NewPinWith is NewPin with options: a witness policy every checkpoint
// must meet, with cosignatures no older than MaxAge.
func NewPinWith(c *Client, verifierKey string, saved []byte, opts PinOptions) (*Pin, error) {
	if opts.MaxAge == 0 {
		opts.MaxAge = DefaultMaxAge
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	v, err := note.NewVerifier(verifierKey)
	if err != nil {
		return nil, fmt.Errorf("custody client: checkpoint verifier key %q: %w (use the key custody serve prints, origin+hash+base64)", verifierKey, err)
	}
	if opts.Policy != nil && len(opts.Policy.Logs) > 0 && !slices.Contains(opts.Policy.Logs, verifierKey) {
		return nil, fmt.Errorf("custody client: the witness policy lists logs, and not the log of the key %q", verifierKey)
	}
	p := &Pin{c: c, verifier: v, opts: opts}
	if len(saved) > 0 {
		cp, err := tlog.OpenCheckpoint(saved, v.Name(), v)
		if err != nil {
			return nil, fmt.Errorf("custody client: the pinned checkpoint does not verify under the verifier key: %w", err)
		}
		p.cp, p.note = &cp, bytes.Clone(saved)
	}
	return p, nil
}

// Note is the pinned checkpoint as the server signed it, nil before the
// first.
func (p *Pin) Note() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return bytes.Clone(p.note)
}

// Pinned is the pinned checkpoint, and false before the first.
func (p *Pin) Pinned() (tlog.Checkpoint, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cp == nil {
		return tlog.Checkpoint{}, false
	}
	return *p.cp, true
}

// Checkpoint fetches the server's checkpoint (GET /v1/log/checkpoint),
// verifies its signature and, when one is pinned, that it extends the
// pinned one (GET /v1/log/proof/consistency); then pins it and returns
// it. A log that does not extend the pin is an error wrapping
// ErrLogInconsistent, and the pin stays as it was.
func (p *Pin) Checkpoint(ctx context.Context) (tlog.Checkpoint, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	msg, err := p.c.Checkpoint(ctx)
	if err != nil {
		return tlog.Checkpoint{}, err
	}
	cp, err := tlog.OpenCheckpoint(msg, p.verifier.Name(), p.verifier)
	if err != nil {
		return tlog.Checkpoint{}, fmt.Errorf("custody client: the server's checkpoint does not verify under the verifier key: %w", err)
	}
	if pol := p.opts.Policy; pol != nil {
		var notBefore time.Time
		if p.opts.MaxAge > 0 {
			notBefore = p.opts.Now().Add(-p.opts.MaxAge)
		}
		if err := pol.Met(msg, notBefore); err != nil {
			return tlog.Checkpoint{}, fmt.Errorf("%w: %w", ErrNotWitnessed, err)
		}
	}
	if old := p.cp; old != nil {
		if err := p.consistent(ctx, *old, cp); err != nil {
			return tlog.Checkpoint{}, err
		}
	}
	p.cp, p.note = &cp, msg
	return cp, nil
}

// consistent checks that cp extends old.
func (p *Pin) consistent(ctx context.Context, old, cp tlog.Checkpoint) error {
	switch {
	case cp.Size < old.Size:
		return fmt.Errorf("%w: the server's checkpoint covers %d entries, fewer than the %d of the pinned one (the store was rolled back or truncated)",
			ErrLogInconsistent, cp.Size, old.Size)
	case cp.Size == old.Size:
		if !bytes.Equal(cp.Root, old.Root) {
			return fmt.Errorf("%w: at size %d the server's checkpoint has another root than the pinned one (history was rewritten)", ErrLogInconsistent, cp.Size)
		}
		return nil
	}
	pr, err := p.c.ConsistencyProof(ctx, old.Size, cp.Size)
	if err != nil {
		return fmt.Errorf("custody client: consistency proof from the pinned size %d to %d: %w", old.Size, cp.Size, err)
	}
	hashes := make([][]byte, len(pr.Hashes))
	for i, h := range pr.Hashes {
		if hashes[i], err = base64.StdEncoding.DecodeString(h); err != nil {
			return fmt.Errorf("%w: the consistency proof from %d to %d holds a malformed hash", ErrLogInconsistent, old.Size, cp.Size)
		}
	}
	if err := tlog.VerifyConsistency(old.Size, cp.Size, hashes, old.Root, cp.Root); err != nil {
		return fmt.Errorf("%w: the server proves no consistency from the pinned size %d to %d (history was rewritten): %w",
			ErrLogInconsistent, old.Size, cp.Size, err)
	}
	return nil
}
