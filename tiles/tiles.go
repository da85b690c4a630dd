// Package tiles serves custody's Merkle logs as C2SP tlog-tiles
// (https://c2sp.org/tlog-tiles): the signed checkpoint, the hash tiles
// (tile/<L>/<N>[.p/<W>]) and the entry bundles (tile/entries/<N>[.p/<W>])
// of each tenant's log.
//
// A hash tile at level L, index N holds the hashes of the tree nodes at
// height 8·L with indexes N·256 … N·256+W−1, 32 bytes each, concatenated;
// a full tile has W = 256 and never changes, a partial one (.p/W) holds
// the W < 256 nodes that exist so far. These are exactly the perfect
// subtree nodes custody stores (see package tlog), so a tile is read with
// one Nodes call. An entry bundle holds the leaves of the same range,
// each prefixed with its length as a big-endian uint16.
//
// The package is parameterized by [Log], the little it needs of a store:
// a tenant's tree size, its stored node hashes, its leaves and its latest
// signed checkpoint. Who may fetch what is the transport's decision: hash
// tiles and checkpoints hold only hashes and are meant to be served
// without a token; entry bundles hold the leaves, which are not public.
package tiles

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"filippo.io/torchwood"
	"github.com/transparency-dev/merkle/compact"
	"golang.org/x/mod/sumdb/tlog"
)

// Height is the height of every tile: 8 levels, 256 hashes or entries.
const Height = torchwood.TileHeight

// Width is the number of hashes of a full tile.
const Width = torchwood.TileWidth

// Cache lifetimes of the answers (Cache-Control values).
const (
	// CacheImmutable is for full tiles and full entry bundles, which
	// never change once they exist.
	CacheImmutable = "public, max-age=31536000, immutable"
	// CachePartial is for partial tiles: a client should soon ask for
	// the wider one.
	CachePartial = "public, max-age=10"
	// CacheCheckpoint is for the checkpoint, which moves on as the log
	// grows and gathers cosignatures.
	CacheCheckpoint = "public, max-age=5"
	// CacheEntries is for full entry bundles: they never change either,
	// but are served only to the callers that may read them, so no shared
	// cache keeps them.
	CacheEntries = "private, max-age=31536000, immutable"
	// CachePartialEntries is for partial entry bundles.
	CachePartialEntries = "private, max-age=10"
)

var (
	// ErrNotFound is returned for a tile, bundle or checkpoint the log does
	// not have (yet): a full tile of a range that is not full, a partial
	// one wider than what exists, a tenant without a log. HTTP 404.
	ErrNotFound = errors.New("tiles: no such tile in this log")
	// ErrBadPath is returned for a path that is not a C2SP tlog-tiles
	// tile path. HTTP 400.
	ErrBadPath = errors.New("tiles: malformed tile path")
)

// Log is what tiles need of a store, for one tenant's log at a time.
type Log interface {
	// Size is the number of leaves of tenant's log (ErrNotFound: the
	// tenant has no log).
	Size(ctx context.Context, tenant string) (uint64, error)
	// Nodes returns the stored hashes of the perfect subtree nodes ids of
	// tenant's tree, one per id, in order.
	Nodes(ctx context.Context, tenant string, ids []compact.NodeID) ([][]byte, error)
	// Leaves returns the exact bytes of the leaves [start, end) of
	// tenant's log, in order.
	Leaves(ctx context.Context, tenant string, start, end uint64) ([][]byte, error)
	// Checkpoint returns the latest signed checkpoint of tenant's log (a
	// C2SP signed note, cosignatures included), ErrNotFound if none was
	// signed yet.
	Checkpoint(ctx context.Context, tenant string) ([]byte, error)
}

// ParsePath parses the part of a tile URL after the log's prefix:
// "tile/<L>/<N>[.p/<W>]" or "tile/entries/<N>[.p/<W>]", with N written
// in the x-prefixed three-digit groups of C2SP tlog-tiles
// ("tile/0/x001/234"). An entry bundle has L = -1. The error wraps
// ErrBadPath.
func ParsePath(path string) (tlog.Tile, error) {
	t, err := torchwood.ParseTilePath(path)
	if err != nil {
		return tlog.Tile{}, fmt.Errorf("%w %q: want tile/<L>/<N>[.p/<W>] or tile/entries/<N>[.p/<W>], N in x-prefixed groups of three digits (c2sp.org/tlog-tiles)", ErrBadPath, path)
	}
	if t.L > 63/Height {
		return tlog.Tile{}, fmt.Errorf("%w %q: level %d is beyond any tree", ErrBadPath, path, t.L)
	}
	return t, nil
}

// Path is the inverse of ParsePath.
func Path(t tlog.Tile) string { return torchwood.TilePath(t) }

// CacheControl is the Cache-Control of the answer for t.
func CacheControl(t tlog.Tile) string {
	switch {
	case t.L < 0 && t.W == Width:
		return CacheEntries
	case t.L < 0:
		return CachePartialEntries
	case t.W == Width:
		return CacheImmutable
	}
	return CachePartial
}

// Read returns the content of the tile or entry bundle t of tenant's log,
// an error wrapping ErrNotFound if the log does not hold it (yet).
func Read(ctx context.Context, l Log, tenant string, t tlog.Tile) ([]byte, error) {
	size, err := l.Size(ctx, tenant)
	if err != nil {
		return nil, err
	}
	level := max(t.L, 0) * Height
	// How many nodes of that height the tree holds, and so how wide the
	// tile of index N can be.
	count := size >> uint(level)
	first := uint64(t.N) * Width
	if count <= first || count-first < uint64(t.W) {
		return nil, fmt.Errorf("%w: %s needs %d nodes at height %d, the tree of size %d has %d",
			ErrNotFound, Path(t), first+uint64(t.W), level, size, count)
	}
	// A partial tile whose range has filled since is still served: it is
	// what it was, the W first hashes.
	if t.L < 0 {
		return bundle(ctx, l, tenant, first, first+uint64(t.W))
	}
	ids := make([]compact.NodeID, t.W)
	for i := range ids {
		ids[i] = compact.NewNodeID(uint(level), first+uint64(i))
	}
	hashes, err := l.Nodes(ctx, tenant, ids)
	if err != nil {
		return nil, err
	}
	if len(hashes) != len(ids) {
		return nil, fmt.Errorf("tiles: the log returned %d hashes for %d nodes of %s", len(hashes), len(ids), Path(t))
	}
	out := make([]byte, 0, len(ids)*tlog.HashSize)
	for i, h := range hashes {
		if len(h) != tlog.HashSize {
			return nil, fmt.Errorf("tiles: node %d of %s is %d bytes, not a hash", i, Path(t), len(h))
		}
		out = append(out, h...)
	}
	return out, nil
}

// bundle is the entry bundle of the leaves [start, end).
func bundle(ctx context.Context, l Log, tenant string, start, end uint64) ([]byte, error) {
	leaves, err := l.Leaves(ctx, tenant, start, end)
	if err != nil {
		return nil, err
	}
	if uint64(len(leaves)) != end-start {
		return nil, fmt.Errorf("tiles: the log returned %d leaves of [%d, %d)", len(leaves), start, end)
	}
	n := 0
	for _, leaf := range leaves {
		n += 2 + len(leaf)
	}
	out := make([]byte, 0, n)
	for i, leaf := range leaves {
		if len(leaf) > 0xFFFF {
			return nil, fmt.Errorf("tiles: leaf %d is %d bytes, more than an entry bundle can hold (65535)", start+uint64(i), len(leaf))
		}
		out = binary.BigEndian.AppendUint16(out, uint16(len(leaf)))
		out = append(out, leaf...)
	}
	return out, nil
}
