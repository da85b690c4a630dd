package custody

import (
	"context"
	"crypto/sha256"
	"errors"
	"sync"
	"sync/atomic"
)

// Authentication without a lookup per request.
//
// A bearer token's principal, once read and checked against the log, is
// kept by the hash of the token together with the principals version it
// was read under: a number the store changes in the same transaction as
// any change to any principal's row (an addition, a rotation, a
// revocation, new rights, or an insider's edit of the row), whoever makes
// it: this server, another server on the same database, or the offline
// CLI. Every request reads the version (one row; see PrincipalVersioner)
// before anything else, and a kept principal serves the request only if
// the version is still the one it was read under. A change committed
// before the request began is therefore always seen by it: invalidation
// is never delayed, and what the cache saves is the principal's lookup
// and its comparison with the log, not the check that nothing changed.

// PrincipalVersioner is implemented by a store that keeps a store-wide
// principals version: PrincipalsVersion returns a number that differs
// from every earlier one once any change to the principals has
// committed. It must be cheap (it is read on every request) and read
// from the committed state, never from a snapshot older than the call.
type PrincipalVersioner interface {
	PrincipalsVersion(ctx context.Context) (int64, error)
}

// authCacheMax bounds the tokens kept; past it the cache starts empty again.
const authCacheMax = 10000

// authCache keeps verified principals by token hash, for one principals
// version at a time.
type authCache struct {
	mu      sync.Mutex
	version int64
	tokens  map[[32]byte]*Principal
	hits    atomic.Uint64
	misses  atomic.Uint64
}

// get returns the principal kept for hash if it was read under version v,
// which is the current version. A different version empties the cache.
func (c *authCache) get(hash [32]byte, v int64) *Principal {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tokens == nil || c.version != v {
		c.tokens, c.version = map[[32]byte]*Principal{}, v
		return nil
	}
	p := c.tokens[hash]
	if p == nil {
		return nil
	}
	cp := *p // the caller may change its copy
	return &cp
}

// put keeps p for hash, read under version v, unless the cache has moved
// to another version meanwhile.
func (c *authCache) put(hash [32]byte, v int64, p *Principal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tokens == nil || c.version != v {
		return
	}
	if len(c.tokens) >= authCacheMax {
		clear(c.tokens)
	}
	cp := *p
	c.tokens[hash] = &cp
}

// AuthCacheStats counts the authentications (and lookups of the user an
// agent acts for) the cache served (Hits) and those that read and checked
// the principal (Misses).
type AuthCacheStats struct {
	Hits, Misses uint64
}

// AuthCacheStats reports the authentication cache's counters since the
// service started. A store that keeps no principals version has no cache:
// every authentication is a miss.
func (s *Service) AuthCacheStats() AuthCacheStats {
	return AuthCacheStats{Hits: s.auth.hits.Load(), Misses: s.auth.misses.Load()}
}

// Authenticate resolves a bearer token to its principal. A principal whose
// stored state disagrees with the log is ErrPrincipalUnverified.
func (s *Service) Authenticate(ctx context.Context, token string) (*Principal, error) {
	if token == "" {
		return nil, ErrUnauthenticated
	}
	return s.authenticateHash(ctx, HashToken(token))
}

// authenticateHash is Authenticate of the token whose hash is hash.
func (s *Service) authenticateHash(ctx context.Context, hash []byte) (*Principal, error) {
	pv, cached := s.store.(PrincipalVersioner)
	var v int64
	if cached {
		// The version is read before the principal: a change committed
		// between the two reads leaves the entry under the older version,
		// and the next request reads the principal again.
		var err error
		if v, err = pv.PrincipalsVersion(ctx); err != nil {
			return nil, err
		}
		if p := s.auth.get([32]byte(hash), v); p != nil {
			s.auth.hits.Add(1)
			return p, nil
		}
	}
	s.auth.misses.Add(1)
	p, err := s.store.PrincipalByToken(ctx, hash)
	if errors.Is(err, ErrNotFound) {
		return nil, ErrUnauthenticated
	}
	if p, err = s.verifiedPrincipal(ctx, p, err); err != nil {
		return nil, err
	}
	if cached {
		s.auth.put([32]byte(hash), v, p)
	}
	return p, nil
}

// errNoSubject is subject's answer for a name that is no user principal
// of the tenant, or a revoked one.
var errNoSubject = errors.New("no such subject")

// subject reads the user principal tenant/name that a caller acts for and
// checks it against the log, as Authenticate does a token's: kept under
// the principals version, by a key no token hash can take.
func (s *Service) subject(ctx context.Context, tenant, name string) (*Principal, error) {
	key := sha256.Sum256([]byte("subject\x00" + tenant + "/" + name))
	pv, cached := s.store.(PrincipalVersioner)
	var v int64
	if cached {
		var err error
		if v, err = pv.PrincipalsVersion(ctx); err != nil {
			return nil, err
		}
		if p := s.auth.get(key, v); p != nil {
			s.auth.hits.Add(1)
			return p, nil
		}
	}
	s.auth.misses.Add(1)
	var sub *Principal
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		sub, err = tx.Principal(ctx, tenant, name)
		return err
	})
	if errors.Is(err, ErrNotFound) || (err == nil && !sub.Has(RoleUser)) {
		return nil, errNoSubject
	}
	if sub, err = s.verifiedPrincipal(ctx, sub, err); errors.Is(err, errRevoked) {
		return nil, errNoSubject
	} else if err != nil {
		return nil, err
	}
	if cached {
		s.auth.put(key, v, sub)
	}
	return sub, nil
}
