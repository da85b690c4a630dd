package tlog

import (
	"fmt"
	"iter"

	"github.com/transparency-dev/merkle/compact"
)

// rebuildProgressEvery is how many leaves Rebuild hashes between calls to
// its progress callback.
const rebuildProgressEvery = 1 << 12

// Rebuild recomputes the whole tree from its leaves, independently of any
// stored node, for `custody verify`. leaves must yield every leaf in order,
// with indexes 0, 1, 2, ...; the leaves themselves are hashed and dropped.
// It returns every perfect-subtree node (compare them with the stored node
// table), the number of leaves and the root hash. progress, if not nil, is
// called with the number of leaves done every few thousand leaves and once at
// the end.
//
// Memory use is proportional to the number of nodes, about 2*size hashes.
// A leaf source that fails should stop yielding and report its own error;
// Rebuild only sees a shorter log.
func Rebuild(leaves iter.Seq2[uint64, []byte], progress func(done uint64)) (*MemNodes, uint64, []byte, error) {
	m := NewMemNodes()
	cr := newRangeFactory().NewEmptyRange(0)
	visit := func(id compact.NodeID, hash []byte) {
		m.nodes[id] = hash // m is not shared yet, no need to lock or copy
	}
	var err error
	for index, leaf := range leaves {
		if want := cr.End(); index != want {
			err = fmt.Errorf("%w: leaf source yielded index %d, want %d", ErrOutOfRange, index, want)
			break
		}
		if err = cr.Append(LeafHash(leaf), visit); err != nil {
			err = fmt.Errorf("tlog: rebuild at leaf %d: %w", index, err)
			break
		}
		if done := cr.End(); progress != nil && done%rebuildProgressEvery == 0 {
			progress(done)
		}
	}
	if err != nil {
		return nil, 0, nil, err
	}
	root, err := rootOf(cr)
	if err != nil {
		return nil, 0, nil, err
	}
	if done := cr.End(); progress != nil && (done == 0 || done%rebuildProgressEvery != 0) {
		progress(done)
	}
	return m, cr.End(), root, nil
}
