package custody

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
)

// Authentication checked by the write.
//
// Authenticate reads the principals version before anything else
// (auth_cache.go): on a shared database, a round trip of every request.
// A write needs no round trip of its own for it where the store checks
// the version in the write's own transaction (PrincipalsChecker: the
// PostgreSQL store, in the round trip that applies the write).
// AuthenticateWrite then serves a principal kept under the version the
// cache last read without reading the version, and returns a context
// that carries that expectation; the store's Update fails a write whose
// expectation no longer holds with ErrPrincipalsChanged, having written
// nothing of it. The service then authenticates the token again, as
// Authenticate does, and runs the write again when the token still
// resolves to the very principal it ran as; otherwise the request gets
// the new answer (an unknown token, a principal that disagrees with the
// log, or ErrConflict when the principal's rights or keys changed). A
// change committed before the request began is seen by it all the same:
// the check runs after the request began.
//
// A request that fails before its write reaches the store (bad input, a
// channel the principal may not assert) reads the version then
// (SettlePrincipals), so that no answer is given to a token revoked
// meanwhile.

// PrincipalsChecker is a store whose Update checks, in the write's own
// transaction, the principals version its context expects
// (ExpectedPrincipals), and fails a write whose expectation does not hold
// with ErrPrincipalsChanged, having written nothing of it.
type PrincipalsChecker interface {
	PrincipalVersioner
	ChecksPrincipals() bool
}

// ErrPrincipalsChanged is a write refused by the store because a change
// to the principals committed after its request was authenticated from
// the cache: the service authenticates it again (see above).
var ErrPrincipalsChanged = errors.New("the principals changed after the request was authenticated")

// principalsExpectation is what a write authenticated from the cache
// expects: the version, the token's hash, and the principal served.
type principalsExpectation struct {
	version   int64
	hash      [32]byte
	principal *Principal
	// settled: the version was checked (by the store in a write, or read)
	// after the request began.
	settled atomic.Bool
}

type expectationKey struct{}

// ExpectedPrincipals is the principals version that a write of ctx
// expects to be the store's, for a PrincipalsChecker's Update; false when
// the write expects nothing (its request read the version, or a write
// before it in the request was checked).
func ExpectedPrincipals(ctx context.Context) (int64, bool) {
	e, ok := ctx.Value(expectationKey{}).(*principalsExpectation)
	if !ok || e.settled.Load() {
		return 0, false
	}
	return e.version, true
}

// PrincipalsRefused is a PrincipalsChecker's check of a batch of writes,
// whose contexts are ctxs: when a write expects a principals version
// (ExpectedPrincipals), it reads the version once with read and reports,
// by index, the writes whose expectation does not hold (to be answered
// ErrPrincipalsChanged, having written nothing of them); nil when no
// write expects one, and read is not called.
func PrincipalsRefused(ctxs []context.Context, read func() (int64, error)) ([]bool, error) {
	if !slices.ContainsFunc(ctxs, func(ctx context.Context) bool { _, ok := ExpectedPrincipals(ctx); return ok }) {
		return nil, nil
	}
	n, err := read()
	if err != nil {
		return nil, err
	}
	refused := make([]bool, len(ctxs))
	for i, ctx := range ctxs {
		v, ok := ExpectedPrincipals(ctx)
		refused[i] = ok && v != n
	}
	return refused, nil
}

// AuthenticateWrite is Authenticate for a request whose work is one
// write: with a PrincipalsChecker store and a token kept in the cache, it
// reads nothing and returns a context whose writes check the principals
// version in their own transaction (see above). Serve the request with
// the context returned, and call SettlePrincipals with its values before
// answering an error, on a context without its cancellation: a server ends
// a request's context when a read of its connection fails, and the check
// must run all the same.
func (s *Service) AuthenticateWrite(ctx context.Context, token string) (context.Context, *Principal, error) {
	if pc, ok := s.store.(PrincipalsChecker); ok && pc.ChecksPrincipals() && token != "" {
		hash := [32]byte(HashToken(token))
		if p, v := s.auth.peek(hash); p != nil {
			s.auth.hits.Add(1)
			cp := *p
			return context.WithValue(ctx, expectationKey{}, &principalsExpectation{version: v, hash: hash, principal: &cp}), p, nil
		}
	}
	p, err := s.Authenticate(ctx, token)
	return ctx, p, err
}

// SettlePrincipals checks, if a write of ctx has not, that the principal
// ctx was authenticated as from the cache (AuthenticateWrite) still holds:
// it reads the version, and authenticates the token again if it moved.
// Its error (an unknown token, ErrConflict, ...) is the request's answer.
func (s *Service) SettlePrincipals(ctx context.Context) error {
	e, ok := ctx.Value(expectationKey{}).(*principalsExpectation)
	if !ok || e.settled.Load() {
		return nil
	}
	v, err := s.store.(PrincipalVersioner).PrincipalsVersion(ctx)
	if err != nil {
		return err
	}
	if v == e.version {
		e.settled.Store(true)
		return nil
	}
	return s.reauthenticate(ctx, e)
}

// updateChecked runs update, and again once the principals are settled
// when the store refused it for a change to them that left its principal
// as it was; a principal changed meanwhile is a *principalChanged, which
// Remember decides again with (ErrConflict for any other write).
func (s *Service) updateChecked(ctx context.Context, run func() error) error {
	err := run()
	e, ok := ctx.Value(expectationKey{}).(*principalsExpectation)
	if !ok {
		return err
	}
	if errors.Is(err, ErrPrincipalsChanged) && !e.settled.Load() {
		p, changed, err := s.settleExpectation(ctx, e)
		if err != nil {
			return err
		}
		if changed {
			return &principalChanged{p: p}
		}
		return run()
	}
	if err == nil {
		e.settled.Store(true)
	}
	return err
}

// principalChanged is a write refused because its principal changed
// after its request was authenticated from the cache: p is the principal
// now, authenticated again.
type principalChanged struct{ p *Principal }

func (e *principalChanged) Error() string {
	return fmt.Sprintf("principal %s changed while its request was in flight (its rights or its keys); nothing was written: send the request again", e.p.ID())
}

func (e *principalChanged) Unwrap() error { return ErrConflict }

// reauthenticate authenticates e's token again and settles e; an error
// when the principal changed.
func (s *Service) reauthenticate(ctx context.Context, e *principalsExpectation) error {
	p, changed, err := s.settleExpectation(ctx, e)
	if err == nil && changed {
		err = &principalChanged{p: p}
	}
	return err
}

// settleExpectation authenticates e's token again, settles e, and
// returns the principal it names now, and whether it is another than the
// one served.
func (s *Service) settleExpectation(ctx context.Context, e *principalsExpectation) (*Principal, bool, error) {
	p, err := s.authenticateHash(ctx, e.hash[:])
	if err != nil {
		return nil, false, err
	}
	e.settled.Store(true)
	return p, !samePrincipal(p, e.principal), nil
}

// freshPrincipal is p, or the principal its token names now when a
// change to the principals committed since the request was authenticated
// from the cache (its expectation is settled here: a read of the
// version).
func (s *Service) freshPrincipal(ctx context.Context, p *Principal) (*Principal, error) {
	e, ok := ctx.Value(expectationKey{}).(*principalsExpectation)
	if !ok || e.settled.Load() {
		return p, nil
	}
	v, err := s.store.(PrincipalVersioner).PrincipalsVersion(ctx)
	if err != nil {
		return nil, err
	}
	if v == e.version {
		e.settled.Store(true)
		return p, nil
	}
	fresh, changed, err := s.settleExpectation(ctx, e)
	if err != nil || !changed {
		return p, err
	}
	return fresh, nil
}

// rememberAgain decides a write again when its principal changed after
// its request was authenticated from the cache, or when it failed on what
// may be the principal's rights before they were checked: with the
// principal as it is now, and the same subject.
func (s *Service) rememberAgain(ctx context.Context, c *Caller, in Candidate, err error) (*Decision, error) {
	var moved *principalChanged
	var p *Principal
	switch {
	case errors.As(err, &moved):
		p = moved.p
	case settled(ctx):
		return nil, err
	default:
		fresh, ferr := s.freshPrincipal(ctx, c.Principal)
		if ferr != nil {
			return nil, ferr
		}
		if fresh == c.Principal {
			return nil, err
		}
		p = fresh
	}
	subject := ""
	if c.Subject.ID() != c.Principal.ID() {
		subject = c.Subject.Name
	}
	c2, err := s.Act(ctx, p, subject)
	if err != nil {
		return nil, err
	}
	return s.remember(ctx, c2, in)
}

// settled reports whether ctx holds no expectation of the principals
// that is still to be checked.
func settled(ctx context.Context) bool {
	_, ok := ExpectedPrincipals(ctx)
	return !ok
}

// samePrincipal reports whether a and b are one principal with the same
// rights, keys and log entry.
func samePrincipal(a, b *Principal) bool {
	return a.ID() == b.ID() && slices.Equal(a.Roles, b.Roles) && slices.Equal(a.Channels, b.Channels) &&
		slices.Equal(a.Groups, b.Groups) && bytes.Equal(a.PublicKey, b.PublicKey) && bytes.Equal(a.TokenHash, b.TokenHash) &&
		bytes.Equal(a.SealedKey, b.SealedKey) && a.LogIndex == b.LogIndex
}

// peek returns the principal kept for hash and the version it was read
// under (nil if none is kept).
func (c *authCache) peek(hash [32]byte) (*Principal, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.tokens[hash]
	if p == nil {
		return nil, 0
	}
	cp := *p
	return &cp, c.version
}
