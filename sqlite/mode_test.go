package sqlite_test

import (
	"bytes"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/custody-mem/custody/sqlite"
)

// captureLog sends the default logger's output to a buffer for the test.
func captureLog(t *testing.T) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	return &buf
}

// TestNewStoreFilesArePrivate: a new store's database, WAL and shared-memory
// files are mode 0600 under the usual umask 022, and opening it warns of
// nothing.
func TestNewStoreFilesArePrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	logs := captureLog(t)
	path := filepath.Join(t.TempDir(), "c.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, name := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, want := fi.Mode().Perm(), fs.FileMode(0o600); got != want {
			t.Errorf("%s: mode %04o, want %04o", filepath.Base(name), got, want)
		}
	}
	if strings.Contains(logs.String(), "readable by other users") {
		t.Fatalf("a private store was warned about: %s", logs)
	}
}

// TestReadableStoreWarns: opening an existing store that others may read
// logs a warning naming the file and the chmod that fixes it; the store
// still opens.
func TestReadableStoreWarns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	logs := captureLog(t)
	s, err = sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatalf("a readable store must still open: %v", err)
	}
	defer s.Close()
	out := logs.String()
	for _, want := range []string{"level=WARN", "readable by other users", "file=" + path, "chmod 600 " + path} {
		if !strings.Contains(out, want) {
			t.Errorf("warning lacks %q: %s", want, out)
		}
	}
}
