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
	before, err := st.LogTenants(ctx)
	if err != nil {
		return err
	}
	p := newProgress(stderr, "restoring records")
	rep, err := svc.Restore(ctx, data, p.update)
	p.done()
	if err != nil {
		return err
	}
	// The checkpoint file of the store restored into, so that a server
	// started on it finds its log where the file says.
	note, err := svc.Checkpoint(ctx, rep.Tenant)
	if err != nil {
		return err
	}
	cp, err := svc.OpenCheckpoint(rep.Tenant, note)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "restored tenant %s: %d principals, %d records (%d already present, %d kept ineligible by the registry)\n",
		rep.Tenant, rep.Principals, rep.Restored, rep.Skipped, len(rep.Withheld))
	fmt.Fprintf(stdout, "signed a checkpoint of %s's log (%s, %d entries) and wrote it to the store's checkpoint file %s\n",
		rep.Tenant, cp.Origin, cp.Size, sf.checkpointPath())
	if len(before) == 0 {
		if err := keepKeyBeside(*sf, stdout); err != nil {
			return err
		}
	}
	return nil
}

// keepKeyBeside copies the server key given with --key beside a new
// SQLite store (the database path + ".key"), where the store's commands
// look for it without --key, if nothing is there: the new store's
// principals' keys are sealed with it and it signs the store's
// checkpoints, so the store is served with that key or not at all. A
// PostgreSQL store's commands are told to give the key instead (its
// default, custody.key, is in whatever folder they run from).
func keepKeyBeside(sf storeFlags, stdout io.Writer) error {
	if sf.key == "" {
		return nil
	}
	if sf.postgres != "" {
		fmt.Fprintf(stdout, "the store was restored with the server key %s: serve it with --key %s (its principals' keys are sealed with it)\n", sf.key, sf.key)
		return nil
	}
	plain := sf
	plain.key = ""
	dst := plain.keyPath()
	if dst == sf.key {
		return nil
	}
	if _, err := os.Stat(dst); !errors.Is(err, fs.ErrNotExist) {
		if err == nil {
			fmt.Fprintf(stdout, "the store was restored with the server key %s: give --key %s to the commands that open it (%s holds another key)\n", sf.key, sf.key, dst)
		}
		return nil
	}
	b, err := os.ReadFile(sf.key)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("copying the server key to %s: %w (give --key %s to the commands that open the store instead)", dst, err, sf.key)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(dst)
		return fmt.Errorf("copying the server key to %s: %w", dst, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(dst)
		return fmt.Errorf("copying the server key to %s: %w", dst, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "copied the server key %s to %s, where the store's commands find it without --key (the restored principals' keys are sealed with it; keep it as you keep %s)\n", sf.key, dst, sf.key)
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
	for _, f := range []string{sf.db, sf.db + "-wal", sf.db + "-shm", sf.checkpointPath(), sf.db + ".key", sf.keyPath() + ".registry"} {
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
