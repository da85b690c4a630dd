package main

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/custody-mem/custody/tlog"
)

func runRestore(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sf storeFlags
	sf.register(fs)
	in := fs.String("in", "", "snapshot `file` written by custody export (\"-\" for stdin)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: custody restore --in FILE [--db FILE] [--key FILE]\n\n"+
			"Verifies a snapshot's signature and checkpoint and restores it. Records already in the store\n"+
			"are kept as they are; retired, rejected and suspended ids never become eligible again.\n"+
			"Every restored principal and record is a log entry. The snapshot verifies only under the key of\n"+
			"the server that exported it: pass that key with --key (it is checked before anything is created;\n"+
			"a restore that fails leaves no new store files behind).\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *in == "" {
		return usageError{"--in is required"}
	}
	var data []byte
	var err error
	if *in == "-" {
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(*in)
	}
	if err != nil {
		return err
	}
	if err := checkSnapshotKey(data, sf.keyPath()); err != nil {
		return err
	}
	created := newFiles(sf)
	err = restoreInto(ctx, &sf, data, stdout, stderr)
	if err != nil {
		created.remove()
	}
	return err
}

// restoreInto opens the store and restores data into it.
func restoreInto(ctx context.Context, sf *storeFlags, data []byte, stdout, stderr io.Writer) error {
	svc, st, err := sf.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer st.Close()
	p := newProgress(stderr, "restoring records")
	rep, err := svc.Restore(ctx, data, p.update)
	p.done()
	if err != nil {
		return err
	}
	if _, err := svc.Checkpoint(ctx, rep.Tenant); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "restored tenant %s: %d principals, %d records (%d already present, %d kept ineligible by the registry)\n",
		rep.Tenant, rep.Principals, rep.Restored, rep.Skipped, len(rep.Withheld))
	return nil
}

// checkSnapshotKey fails fast, before any file is created, when the server
// key at keyPath is absent or did not sign the snapshot: a restore can only
// verify a snapshot under the key of the server that exported it.
func checkSnapshotKey(data []byte, keyPath string) error {
	hint := "pass --key FILE with the key of the server that exported it (the source's --db path + \".key\", or its --key)"
	if _, err := os.Stat(keyPath); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no server key at %s, and a new key cannot verify the snapshot's signature: %s", keyPath, hint)
	}
	key, _, err := tlog.LoadOrCreateServerKey(keyPath)
	if err != nil {
		return err
	}
	var signed struct {
		Snapshot  json.RawMessage `json:"snapshot"`
		Signature []byte          `json:"signature"`
	}
	if err := json.Unmarshal(data, &signed); err != nil || len(signed.Snapshot) == 0 {
		return fmt.Errorf("the input is not a custody snapshot (write one with custody export)")
	}
	if !ed25519.Verify(key.PublicKey(), signed.Snapshot, signed.Signature) {
		return fmt.Errorf("the snapshot's signature does not verify under the server key %s: %s; otherwise the snapshot was altered", keyPath, hint)
	}
	return nil
}

// createdFiles are the store files a failed restore must not leave behind.
type createdFiles []string

// newFiles lists the SQLite store's files that do not exist yet (nothing
// for PostgreSQL, whose database the operator made).
func newFiles(sf storeFlags) createdFiles {
	if sf.postgres != "" {
		return nil
	}
	var out createdFiles
	for _, f := range []string{sf.db, sf.db + "-wal", sf.db + "-shm", sf.checkpointPath(), sf.keyPath() + ".registry"} {
		if _, err := os.Lstat(f); errors.Is(err, fs.ErrNotExist) {
			out = append(out, f)
		}
	}
	return out
}

func (c createdFiles) remove() {
	for _, f := range c {
		os.Remove(f)
	}
}
