package embed

import (
	"strings"
	"sync"
)

// wordCache keeps the sparse vectors of the words read lately, within a
// bound on their components (wordCacheComponents, 8 bytes each): a
// current generation and the one before it. A word found in the older
// one moves to the current one; once the current one is full it becomes
// the older one, and what that held is dropped. So the words a store's
// texts use often stay, and the memory stays bounded. Builtin caches the
// words WordNet knows alone: the words only a record holds (numbers,
// names, identifiers) are not kept past its erasure. Safe for concurrent
// use.
type wordCache struct {
	mu        sync.RWMutex
	cur, prev map[string][]component
	size      int // components in cur
	max       int // components a generation holds at most
}

// wordCacheComponents bounds the components of one generation: 8 MB, the
// vectors of some 7,000 words WordNet knows (about 150 components each).
const wordCacheComponents = 1 << 20

func newWordCache(max int) *wordCache {
	return &wordCache{cur: map[string][]component{}, max: max}
}

// get is the vector of word w, if cached.
func (c *wordCache) get(w []byte) ([]component, bool) {
	c.mu.RLock()
	v, ok := c.cur[string(w)]
	if !ok && c.prev != nil {
		if v, ok = c.prev[string(w)]; ok {
			c.mu.RUnlock()
			c.put(string(w), v)
			return v, true
		}
	}
	c.mu.RUnlock()
	return v, ok
}

// put caches the vector v of word w.
func (c *wordCache) put(w string, v []component) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.cur[w]; ok {
		return
	}
	if c.size+len(v) > c.max {
		c.prev, c.cur, c.size = c.cur, map[string][]component{}, 0
	}
	c.cur[strings.Clone(w)] = v // w may view a store's kept texts, which it must not keep
	c.size += len(v)
}
