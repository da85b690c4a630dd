package sqlite

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strings"
)

// fileMode is the mode of a new store's files. SQLite creates the WAL and
// shared-memory files with the mode of the database file, so creating the
// database file 0600 before SQLite opens it makes all three private.
const fileMode fs.FileMode = 0o600

// prepareFiles creates the database file at path with mode 0600 when it does
// not exist yet, and warns (slog, naming the file and the fix) about each
// existing store file that others may read or write.
func prepareFiles(path string) error {
	if path == ":memory:" || strings.HasPrefix(path, "file:") {
		return nil // not a plain file path: SQLite makes what it names
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, fileMode)
	switch {
	case err == nil:
		return f.Close()
	case !errors.Is(err, fs.ErrExist):
		return fmt.Errorf("creating store %s: %w", path, err)
	}
	for _, name := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(name)
		if err != nil {
			continue // the WAL and SHM files come and go
		}
		if perm := fi.Mode().Perm(); perm&0o077 != 0 {
			slog.Warn("sqlite: store file is readable by other users; it holds every memory and the log",
				"file", name, "mode", fmt.Sprintf("%04o", perm), "fix", fmt.Sprintf("chmod 600 %s*", path))
		}
	}
	return nil
}
