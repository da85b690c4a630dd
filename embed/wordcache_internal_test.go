package embed

import (
	"strconv"
	"testing"
)

// TestWordCacheBounded: the cache never holds more than two generations'
// components, and a word read often stays in it while words read once
// pass through (its twin: a word read once is found until two
// generations have filled after it).
func TestWordCacheBounded(t *testing.T) {
	c := newWordCache(100)
	vec := make([]component, 10)
	c.put("often", vec)
	for i := range 1000 {
		c.put("once"+strconv.Itoa(i), vec)
		if _, ok := c.get([]byte("often")); !ok {
			t.Fatalf("the word read often was dropped after %d others", i+1)
		}
		total := c.size
		for _, v := range c.prev {
			total += len(v)
		}
		if total > 200 {
			t.Fatalf("%d components cached, want at most 200", total)
		}
	}
	if _, ok := c.get([]byte("once999")); !ok {
		t.Error("the word cached last is not found")
	}
	if _, ok := c.get([]byte("once0")); ok {
		t.Error("a word read once, 999 words ago, is still cached")
	}
}
