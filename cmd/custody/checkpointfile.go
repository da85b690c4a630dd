package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"

	custody "github.com/custody-mem/custody"
)

// moveCheckpointFile moves the store's checkpoint file from where it was
// kept before it was named after the store (oldCheckpointPath) to its
// name now, when it is there, not yet at the new name, and holds
// checkpoints of this store's logs. A file there that holds none belongs
// to another store and stays where it is.
func (f *storeFlags) moveCheckpointFile(stderr io.Writer) error {
	old, now := f.oldCheckpointPath(), f.checkpointPath()
	if old == "" || old == now {
		return nil
	}
	if _, err := os.Stat(now); !errors.Is(err, fs.ErrNotExist) {
		return nil // there already (or unreadable: opening it will say so)
	}
	b, err := custody.ReadCheckpointFile(old)
	if err != nil || b == nil {
		return err
	}
	if !holdsLogOf(b, f.logName) {
		return nil
	}
	if err := os.Rename(old, now); err != nil {
		return fmt.Errorf("moving the checkpoint file %s to %s, its name now: %w (move it by hand, keeping its mode)", old, now, err)
	}
	if stderr != nil {
		fmt.Fprintf(stderr, "custody: moved the checkpoint file %s to %s (a store's checkpoint file is named after the store)\n", old, now)
	}
	return nil
}

// holdsLogOf reports whether the checkpoint file b holds a checkpoint of
// a log of the store whose log name is name.
func holdsLogOf(b []byte, name string) bool {
	for _, n := range custody.SplitNotes(b) {
		if strings.HasPrefix(noteOrigin(n), name+"/") {
			return true
		}
	}
	return false
}

// logNamesIn lists the log names of the tenants' logs whose checkpoints
// the checkpoint file b holds (an origin NAME/TENANT names NAME), but for
// name.
func logNamesIn(b []byte, name string) []string {
	seen := map[string]bool{}
	for _, n := range custody.SplitNotes(b) {
		o := noteOrigin(n)
		if i := strings.LastIndexByte(o, '/'); i > 0 && o[:i] != name {
			seen[o[:i]] = true
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func noteOrigin(note []byte) string {
	line, _, _ := strings.Cut(string(note), "\n")
	return line
}

// otherStoreFile explains a missing checkpoint file whose older location
// holds another store's checkpoints: "" when it does not.
func (f *storeFlags) otherStoreFile() string {
	old, now := f.oldCheckpointPath(), f.checkpointPath()
	if old == "" || old == now {
		return ""
	}
	if _, err := os.Stat(now); !errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	b, err := custody.ReadCheckpointFile(old)
	if err != nil || b == nil || holdsLogOf(b, f.logName) {
		return ""
	}
	names := logNamesIn(b, f.logName)
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("The file %s, where checkpoint files were kept before they were named after their store, holds checkpoints of another store's logs (log name %s), not of this store's (log name %s): it belongs to that store, and this store's file is %s.",
		old, strings.Join(names, ", "), f.logName, now)
}
