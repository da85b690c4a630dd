package tlog

import (
	"context"
	"crypto/sha256"
	"fmt"

	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/rfc6962"
)

// Storage model.
//
// The tree is persisted as the hashes of its perfect subtrees: node
// (level, index) covers leaves [index<<level, (index+1)<<level) and is stored
// once all those leaves exist. Level 0 nodes are leaf hashes. Nodes that would
// cover a partial subtree ("ephemeral" nodes, on the right border of a tree
// whose size is not a power of two) are never stored; they are recomputed
// from stored nodes when a root or proof needs them.
//
// For a tree of size n the stored nodes that matter for the next append are
// the roots of the perfect subtrees covering [0, n), one per set bit of n
// (compact.RangeNodes(0, n)). Append reads exactly those.

// NodeReader reads stored node hashes. Nodes must return one hash per id, in
// the order of ids, or an error wrapping [ErrMissingNode] if any of them is
// not stored. Implementations must not retain or modify ids, and callers may
// modify the returned slices.
type NodeReader interface {
	Nodes(ctx context.Context, ids []compact.NodeID) ([][]byte, error)
}

// InOrder answers a [NodeReader] call from the hashes a backend found (in
// any order): one per id, in the order of ids, or an error wrapping
// [ErrMissingNode] naming the first id it lacks.
func InOrder(ids []compact.NodeID, found map[compact.NodeID][]byte) ([][]byte, error) {
	out := make([][]byte, len(ids))
	for i, id := range ids {
		h, ok := found[id]
		if !ok {
			return nil, fmt.Errorf("%w: (level %d, index %d)", ErrMissingNode, id.Level, id.Index)
		}
		out[i] = h
	}
	return out, nil
}

// Node is a node hash to be stored by a backend.
type Node struct {
	ID   compact.NodeID
	Hash []byte
}

// HashSize is the length of every hash in the tree (SHA-256).
const HashSize = sha256.Size

// LeafHash returns the RFC 6962 leaf hash of leaf: SHA-256(0x00 || leaf).
func LeafHash(leaf []byte) []byte {
	return rfc6962.DefaultHasher.HashLeaf(leaf)
}

// EmptyRoot returns the root hash of the empty tree: SHA-256 of no bytes.
func EmptyRoot() []byte {
	return rfc6962.DefaultHasher.EmptyRoot()
}

// hashChildren is the RFC 6962 interior node hash: SHA-256(0x01 || l || r).
func hashChildren(l, r []byte) []byte {
	return rfc6962.DefaultHasher.HashChildren(l, r)
}

func newRangeFactory() *compact.RangeFactory {
	return &compact.RangeFactory{Hash: hashChildren}
}

// Append computes the nodes to store when a leaf with hash leafHash is
// appended to a tree of the given size. It reads the right-border nodes of
// the current tree from r (one Nodes call, popcount(size) ids) and returns
// every new perfect-subtree node, starting with the level-0 leaf node, and the
// root hash of the tree of size+1.
func Append(ctx context.Context, r NodeReader, size uint64, leafHash []byte) (nodes []Node, root []byte, err error) {
	return AppendMany(ctx, r, size, [][]byte{leafHash})
}

// AppendMany is [Append] for several leaves at once: the border is read once,
// the leaves are appended in order, and the returned nodes are those of all
// the new leaves and perfect subtrees, ready to store in one transaction.
// With no leaves it returns no nodes and the current root.
func AppendMany(ctx context.Context, r NodeReader, size uint64, leafHashes [][]byte) (nodes []Node, root []byte, err error) {
	for i, h := range leafHashes {
		if len(h) != HashSize {
			return nil, nil, fmt.Errorf("%w: leaf hash %d is %d bytes, want %d", ErrBadHash, i, len(h), HashSize)
		}
	}
	cr, err := readRange(ctx, r, size)
	if err != nil {
		return nil, nil, err
	}
	// Every leaf adds itself plus one node per trailing one bit of its index.
	nodes = make([]Node, 0, 2*len(leafHashes)+1)
	visit := func(id compact.NodeID, hash []byte) {
		nodes = append(nodes, Node{ID: id, Hash: hash})
	}
	for _, h := range leafHashes {
		if err := cr.Append(h, visit); err != nil {
			return nil, nil, fmt.Errorf("tlog: append at size %d: %w", cr.End(), err)
		}
	}
	root, err = rootOf(cr)
	if err != nil {
		return nil, nil, err
	}
	return nodes, root, nil
}

// AppendNodes is [Append] without the root: the nodes to store for one
// more leaf, for a store that does not need the new root at once (hashing
// it is a few interior nodes more per append).
func AppendNodes(ctx context.Context, r NodeReader, size uint64, leafHash []byte) ([]Node, error) {
	if len(leafHash) != HashSize {
		return nil, fmt.Errorf("%w: leaf hash is %d bytes, want %d", ErrBadHash, len(leafHash), HashSize)
	}
	cr, err := readRange(ctx, r, size)
	if err != nil {
		return nil, err
	}
	var nodes []Node
	if err := cr.Append(leafHash, func(id compact.NodeID, hash []byte) { nodes = append(nodes, Node{ID: id, Hash: hash}) }); err != nil {
		return nil, fmt.Errorf("tlog: append at size %d: %w", size, err)
	}
	return nodes, nil
}

// RootHash returns the root hash of the tree of the given size, [EmptyRoot]
// for size 0. It reads popcount(size) nodes in one Nodes call.
func RootHash(ctx context.Context, r NodeReader, size uint64) ([]byte, error) {
	cr, err := readRange(ctx, r, size)
	if err != nil {
		return nil, err
	}
	return rootOf(cr)
}

// readRange loads the compact range [0, size) from r.
func readRange(ctx context.Context, r NodeReader, size uint64) (*compact.Range, error) {
	rf := newRangeFactory()
	if size == 0 {
		return rf.NewEmptyRange(0), nil
	}
	hashes, err := readNodes(ctx, r, compact.RangeNodes(0, size, nil))
	if err != nil {
		return nil, fmt.Errorf("tlog: reading border of tree size %d: %w", size, err)
	}
	cr, err := rf.NewRange(0, size, hashes)
	if err != nil {
		return nil, fmt.Errorf("tlog: tree size %d: %w", size, err)
	}
	return cr, nil
}

func rootOf(cr *compact.Range) ([]byte, error) {
	if cr.End() == 0 {
		return EmptyRoot(), nil
	}
	root, err := cr.GetRootHash(nil)
	if err != nil {
		return nil, fmt.Errorf("tlog: root of tree size %d: %w", cr.End(), err)
	}
	return root, nil
}

// readNodes calls r.Nodes once and checks the shape of the answer, so that a
// faulty backend produces an error rather than a wrong proof or a panic.
func readNodes(ctx context.Context, r NodeReader, ids []compact.NodeID) ([][]byte, error) {
	if len(ids) == 0 {
		return [][]byte{}, nil
	}
	hashes, err := r.Nodes(ctx, ids)
	if err != nil {
		return nil, err
	}
	if got, want := len(hashes), len(ids); got != want {
		return nil, fmt.Errorf("%w: reader returned %d hashes for %d ids", ErrMissingNode, got, want)
	}
	for i, h := range hashes {
		if len(h) != HashSize {
			return nil, fmt.Errorf("%w: stored node (level %d, index %d) is %d bytes, want %d",
				ErrBadHash, ids[i].Level, ids[i].Index, len(h), HashSize)
		}
	}
	return hashes, nil
}

// Border is a tree's right border, the nodes the next append reads, kept
// in memory by a store that appends often: with it an append reads
// nothing. It is not safe for concurrent use.
type Border struct{ cr *compact.Range }

// ReadBorder reads the border of the tree of the given size from r (one
// Nodes call).
func ReadBorder(ctx context.Context, r NodeReader, size uint64) (*Border, error) {
	cr, err := readRange(ctx, r, size)
	if err != nil {
		return nil, err
	}
	return &Border{cr: cr}, nil
}

// Size is the size of the tree b is the border of.
func (b *Border) Size() uint64 { return b.cr.End() }

// Append appends the leaf with hash leafHash to b and returns the nodes to
// store, as [AppendNodes] does for b's tree.
func (b *Border) Append(leafHash []byte) ([]Node, error) {
	if len(leafHash) != HashSize {
		return nil, fmt.Errorf("%w: leaf hash is %d bytes, want %d", ErrBadHash, len(leafHash), HashSize)
	}
	var nodes []Node
	if err := b.cr.Append(leafHash, func(id compact.NodeID, hash []byte) { nodes = append(nodes, Node{ID: id, Hash: hash}) }); err != nil {
		return nil, fmt.Errorf("tlog: append at size %d: %w", b.cr.End(), err)
	}
	return nodes, nil
}
