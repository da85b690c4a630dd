package tlog

import (
	"bytes"
	"context"
	"sync"

	"github.com/transparency-dev/merkle/compact"
)

// MemNodes is an in-memory node store: a [NodeReader] plus Put. It backs
// tests, benchmarks and [Rebuild]. It is safe for concurrent use and copies
// hashes in and out, so callers may modify what they pass or receive.
type MemNodes struct {
	mu    sync.RWMutex
	nodes map[compact.NodeID][]byte
}

// NewMemNodes returns an empty store.
func NewMemNodes() *MemNodes {
	return &MemNodes{nodes: make(map[compact.NodeID][]byte)}
}

// Put stores nodes, replacing any existing hash with the same id.
func (m *MemNodes) Put(nodes []Node) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, n := range nodes {
		m.nodes[n.ID] = bytes.Clone(n.Hash)
	}
}

// Nodes implements [NodeReader].
func (m *MemNodes) Nodes(_ context.Context, ids []compact.NodeID) ([][]byte, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out, err := InOrder(ids, m.nodes)
	if err != nil {
		return nil, err
	}
	for i, h := range out {
		out[i] = bytes.Clone(h)
	}
	return out, nil
}

// Len returns the number of stored nodes. A tree of size n has 2n-popcount(n)
// perfect-subtree nodes.
func (m *MemNodes) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.nodes)
}
