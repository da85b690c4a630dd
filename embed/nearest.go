package embed

import (
	"container/heap"
	"sort"
)

// Nearest keeps the k most similar of the items offered to it (an exact
// nearest-neighbour scan's running result).
type Nearest[T any] struct {
	k int
	h nearHeap[T]
}

// NewNearest keeps k items.
func NewNearest[T any](k int) *Nearest[T] { return &Nearest[T]{k: k} }

// Offer considers x with similarity sim.
func (n *Nearest[T]) Offer(x T, sim float32) {
	if n.k <= 0 {
		return
	}
	if len(n.h) < n.k {
		heap.Push(&n.h, near[T]{x, sim})
		return
	}
	if sim > n.h[0].sim {
		n.h[0] = near[T]{x, sim}
		heap.Fix(&n.h, 0)
	}
}

// Len is how many items are kept.
func (n *Nearest[T]) Len() int { return len(n.h) }

// Each calls fn for each kept item, most similar first.
func (n *Nearest[T]) Each(fn func(x T, sim float32)) {
	s := append(nearHeap[T](nil), n.h...)
	sort.SliceStable(s, func(i, j int) bool { return s[i].sim > s[j].sim })
	for _, e := range s {
		fn(e.x, e.sim)
	}
}

// ranked is the kept items of n, indexes into ids, as the ids they index
// and their similarities, most similar first: a scorer's Top.
func ranked[T any](n *Nearest[int], ids []T) ([]T, []float32) {
	out := make([]T, 0, n.Len())
	sims := make([]float32, 0, n.Len())
	n.Each(func(i int, sim float32) {
		out = append(out, ids[i])
		sims = append(sims, sim)
	})
	return out, sims
}

type near[T any] struct {
	x   T
	sim float32
}

type nearHeap[T any] []near[T]

func (h nearHeap[T]) Len() int           { return len(h) }
func (h nearHeap[T]) Less(i, j int) bool { return h[i].sim < h[j].sim }
func (h nearHeap[T]) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *nearHeap[T]) Push(x any)        { *h = append(*h, x.(near[T])) }
func (h *nearHeap[T]) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
