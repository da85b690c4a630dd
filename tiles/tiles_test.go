package tiles_test

import (
	"context"
	"errors"
	"testing"

	"github.com/custody-mem/custody/tiles"
	"github.com/transparency-dev/merkle/compact"
	"golang.org/x/mod/sumdb/tlog"
)

func TestParsePath(t *testing.T) {
	for _, c := range []struct {
		path string
		want tlog.Tile
	}{
		{"tile/0/000", tlog.Tile{H: 8, L: 0, N: 0, W: 256}},
		{"tile/1/x001/234.p/7", tlog.Tile{H: 8, L: 1, N: 1234, W: 7}},
		{"tile/entries/x002/x000/005", tlog.Tile{H: 8, L: -1, N: 2000005, W: 256}},
		{"tile/entries/003.p/255", tlog.Tile{H: 8, L: -1, N: 3, W: 255}},
	} {
		got, err := tiles.ParsePath(c.path)
		if err != nil || got != c.want {
			t.Errorf("ParsePath(%q) = %+v, %v; want %+v", c.path, got, err, c.want)
		}
		if p := tiles.Path(got); err == nil && p != c.path {
			t.Errorf("Path(%+v) = %q, want %q", got, p, c.path)
		}
	}
	for _, bad := range []string{"", "tile/0/1", "tile/0/0000", "tile/0/000.p/0", "tile/0/000.p/256", "tile/x/000",
		"tile/0/x000/001", "tile/8/000", "checkpoint", "tile/entries/000.p/", "tile/-1/000"} {
		if _, err := tiles.ParsePath(bad); !errors.Is(err, tiles.ErrBadPath) {
			t.Errorf("ParsePath(%q) = %v; want ErrBadPath", bad, err)
		}
	}
}

// FuzzParsePath: no path makes ParsePath panic, and every path it accepts
// is the canonical one of its tile.
func FuzzParsePath(f *testing.F) {
	for _, s := range []string{"tile/0/000", "tile/1/x001/234.p/7", "tile/entries/003.p/255", "tile/0/1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		tile, err := tiles.ParsePath(path)
		if err != nil {
			return
		}
		if got := tiles.Path(tile); got != path {
			t.Fatalf("ParsePath(%q) accepted a path that is not canonical (%q)", path, got)
		}
	})
}

// sizeLog is a tiles.Log of size leaves whose node hashes name themselves.
type sizeLog uint64

func (l sizeLog) Size(context.Context, string) (uint64, error) { return uint64(l), nil }
func (l sizeLog) Nodes(_ context.Context, _ string, ids []compact.NodeID) ([][]byte, error) {
	out := make([][]byte, len(ids))
	for i, id := range ids {
		h := make([]byte, 32)
		h[0], h[1] = byte(id.Level), byte(id.Index)
		out[i] = h
	}
	return out, nil
}
func (l sizeLog) Leaves(_ context.Context, _ string, start, end uint64) ([][]byte, error) {
	var out [][]byte
	for i := start; i < end; i++ {
		out = append(out, []byte{byte(i)})
	}
	return out, nil
}
func (l sizeLog) Checkpoint(context.Context, string) ([]byte, error) { return nil, tiles.ErrNotFound }

// Read serves exactly the tiles a tree of a size has, of the nodes at
// the tile's height.
func TestReadWidths(t *testing.T) {
	ctx := context.Background()
	l := sizeLog(256*3 + 5) // level 0: tiles 0..2 full, 3 of 5; level 1: tile 0 of 3
	for _, c := range []struct {
		path string
		size int // -1: not found
	}{
		{"tile/0/002", 256 * 32},
		{"tile/0/003.p/5", 5 * 32},
		{"tile/0/003.p/6", -1},
		{"tile/0/003", -1},
		{"tile/1/000.p/3", 3 * 32},
		{"tile/1/000.p/4", -1},
		{"tile/2/000.p/1", -1},
		{"tile/entries/003.p/5", 5 * 3},
	} {
		tile, err := tiles.ParsePath(c.path)
		if err != nil {
			t.Fatal(err)
		}
		data, err := tiles.Read(ctx, l, "acme", tile)
		if c.size < 0 {
			if !errors.Is(err, tiles.ErrNotFound) {
				t.Errorf("%s: %d bytes, %v; want ErrNotFound", c.path, len(data), err)
			}
			continue
		}
		if err != nil || len(data) != c.size {
			t.Errorf("%s: %d bytes, %v; want %d", c.path, len(data), err, c.size)
			continue
		}
		if tile.L == 1 && (data[0] != 8 || data[32+1] != 1) {
			t.Errorf("%s: holds %x…, not the nodes of height 8", c.path, data[:2])
		}
	}
}
