package postgres

import (
	"sync"

	custody "github.com/custody-mem/custody"
)

// The versions of the keys this server wrote or read last, which a batch
// run ahead (ahead.go) tells its writes instead of reading them. They are
// guesses, never trusted: each is checked in the batch's round trip, and
// a wrong one costs that batch its reads, as before. A key not kept is
// guessed new.

// maxKeys bounds the keys kept; past it they are dropped and learned
// again.
const maxKeys = 1 << 16

// keyRef names a key of a namespace of an owner of a tenant.
type keyRef struct{ tenant, owner, namespace, key string }

// keyCache is the kept versions of keys.
type keyCache struct {
	mu sync.Mutex
	m  map[keyRef]custody.KeyVersions
}

// get is k's kept versions (the zero value and false for none).
func (c *keyCache) get(k keyRef) (custody.KeyVersions, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

// put keeps v as k's versions.
func (c *keyCache) put(k keyRef, v custody.KeyVersions) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxKeys {
		c.m = map[keyRef]custody.KeyVersions{}
	}
	c.m[k] = v
}

// forget drops k.
func (c *keyCache) forget(k keyRef) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, k)
}

// clear drops every key.
func (c *keyCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m = nil
}

// inserted keeps what a new record r makes of its key: its version the
// highest, and the one in force if admitted. A record not admitted
// whose key's version in force is not kept leaves the key unknown.
func (c *keyCache) inserted(r *custody.Record) {
	if r.Key == "" {
		return
	}
	k := keyRef{r.Tenant, r.Owner, r.Namespace, r.Key}
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	switch {
	case r.State == custody.StateAdmitted:
		v = custody.KeyVersions{Current: r.ID, Max: r.Version}
	case ok:
		v.Max = max(v.Max, r.Version)
	default:
		return
	}
	if c.m == nil || len(c.m) >= maxKeys {
		c.m = map[keyRef]custody.KeyVersions{}
	}
	c.m[k] = v
}
