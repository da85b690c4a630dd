package sqlite

import (
	"path/filepath"
	"testing"
)

// Every connection of a store, the readers' and the writer's, maps up to
// SQLite's limit of the file (mmap.go), not 1 GB.
func TestConnectionsMapTheFile(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var got int64
	if err := s.reader().QueryRowContext(t.Context(), `PRAGMA mmap_size`).Scan(&got); err != nil || got != mmapSize {
		t.Errorf("a reader maps %d bytes (%v), want %d", got, err, int64(mmapSize))
	}
	if err := s.w.QueryRowContext(t.Context(), `PRAGMA mmap_size`).Scan(&got); err != nil || got != mmapSize {
		t.Errorf("the writer's pool maps %d bytes (%v), want %d", got, err, int64(mmapSize))
	}
}
