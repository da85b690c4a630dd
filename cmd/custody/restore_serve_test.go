package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// storeUnderTest is a store's flags on one backend: a fresh SQLite file,
// or a fresh PostgreSQL database served with key.
type storeUnderTest struct {
	name  string
	flags []string
}

// restoreBackends are a source store and an empty one to restore into, on
// SQLite and, with CUSTODY_TEST_POSTGRES, PostgreSQL. The PostgreSQL pair
// shares one key file, as two databases served from one folder do.
func restoreBackends(t *testing.T) [][2]storeUnderTest {
	dir := t.TempDir()
	out := [][2]storeUnderTest{{
		{"sqlite", []string{"--db", filepath.Join(dir, "old.db")}},
		{"sqlite", []string{"--db", filepath.Join(dir, "new.db")}},
	}}
	if os.Getenv("CUSTODY_TEST_POSTGRES") != "" {
		key := filepath.Join(t.TempDir(), "custody.key")
		out = append(out, [2]storeUnderTest{
			{"postgres", []string{"--postgres", postgresDB(t), "--key", key}},
			{"postgres", []string{"--postgres", postgresDB(t), "--key", key}},
		})
	}
	return out
}

// serveOnce runs serve on args until it listens or fails, and returns
// the error it failed with (nil: it served, and has been stopped).
func serveOnce(t *testing.T, args ...string) (error, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	w := &watch{serving: make(chan struct{})}
	done := make(chan error, 1)
	go func() { done <- runServe(ctx, append([]string{"--addr", "127.0.0.1:0"}, args...), io.Discard, w) }()
	select {
	case err := <-done:
		return err, w.String()
	case <-w.serving:
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve, stopped: %v\n%s", err, w)
	}
	return nil, w.String()
}

// TestRestoreThenServe: the documented restore comes back up. A store is
// served and written, exported, restored into a new store with the
// exporting server's key, and the new store is served (on SQLite with no
// flag but --db: the restore wrote the store's checkpoint file and left
// the key where serve looks for it), its token works, and verify agrees.
// With PostgreSQL, the two databases share one key file in one folder:
// each has a checkpoint file named after its log name, so serving the
// second is not refused as a rollback of the first, and the first still
// serves after.
func TestRestoreThenServe(t *testing.T) {
	for _, pair := range restoreBackends(t) {
		src, dst := pair[0], pair[1]
		t.Run(src.name, func(t *testing.T) {
			on := func(s storeUnderTest, args ...string) (int, string, string) { return cli(append(args, s.flags...)...) }
			code, tok, msg := on(src, "principal", "add", "--tenant", "acme", "--name", "alice", "--role", "user")
			if code != 0 {
				t.Fatalf("principal add: %s", msg)
			}
			token := strings.TrimSpace(tok)
			s := runServed(t, src.flags...)
			s.write(t, token, 3, "before the export")
			s.stop()
			snap := filepath.Join(t.TempDir(), "snap.jsonl")
			if code, _, msg := on(src, "export", "--tenant", "acme", "--out", snap); code != 0 {
				t.Fatalf("export: %s", msg)
			}
			restoreFlags := dst.flags
			if src.name == "sqlite" {
				restoreFlags = append(restoreFlags, "--key", src.flags[1]+".key")
			}
			code, out, msg := cli(append([]string{"restore", "--in", snap}, restoreFlags...)...)
			if code != 0 {
				t.Fatalf("restore: %s", msg)
			}
			if !strings.Contains(out, "restored tenant acme: 1 principals, 3 records") || !strings.Contains(out, "wrote it to the store's checkpoint file") {
				t.Fatalf("restore printed %q; want what it restored and the checkpoint file it wrote", out)
			}
			if src.name == "sqlite" && !strings.Contains(out, "copied the server key") {
				t.Fatalf("restore printed %q; want it to say where it copied the key", out)
			}

			// The restored store serves, with no flag but its own.
			s = runServed(t, dst.flags...)
			s.write(t, token, 1, "after the restore")
			s.stop()
			if out, errOut, err := verifyOut(t, dst.flags...); err != nil || !strings.HasPrefix(out, "ok: ") {
				t.Fatalf("verify of the restored store = %v, %q, %q", err, out, errOut)
			}
			// The source still serves beside it.
			if err, log := serveOnce(t, src.flags...); err != nil {
				t.Fatalf("serving the source store after the restore: %v\n%s", err, log)
			}
		})
	}
}

// TestCheckpointFileOfAnotherStore: a checkpoint file that holds another
// store's checkpoints is refused as exactly that, naming both log names,
// not as a rollback; the store's own file serves.
func TestCheckpointFileOfAnotherStore(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	for _, db := range []string{a, b} {
		if code, _, msg := cli("principal", "add", "--db", db, "--tenant", "acme", "--name", "alice", "--role", "user"); code != 0 {
			t.Fatalf("principal add: %s", msg)
		}
		if err, log := serveOnce(t, "--db", db); err != nil {
			t.Fatalf("serve %s: %v\n%s", db, err, log)
		}
	}
	own, err := os.ReadFile(b + ".checkpoint")
	if err != nil {
		t.Fatal(err)
	}
	copyFile(t, a+".checkpoint", b+".checkpoint")
	err, _ = serveOnce(t, "--db", b)
	nameA, nameB := logNameOf(t, a), logNameOf(t, b)
	if err == nil || !strings.Contains(err.Error(), "belongs to another store") || !strings.Contains(err.Error(), nameA) || !strings.Contains(err.Error(), nameB) || strings.Contains(err.Error(), "rolled") {
		t.Fatalf("serve with a's checkpoint file = %v; want it named as another store's file (log names %s and %s)", err, nameA, nameB)
	}
	if err := os.WriteFile(b+".checkpoint", own, 0o600); err != nil {
		t.Fatal(err)
	}
	if err, log := serveOnce(t, "--db", b); err != nil {
		t.Fatalf("serve with its own checkpoint file: %v\n%s", err, log)
	}
}

// TestCheckpointFileMovedToItsName: a store served with --key kept its
// checkpoint file beside the key (KEY.checkpoint); it is moved to the
// store's own name at the next start, which serves. A file there that
// holds another store's checkpoints stays, and the refusal of a store
// whose own file is missing says whose that file is.
func TestCheckpointFileMovedToItsName(t *testing.T) {
	dir := t.TempDir()
	db, key := filepath.Join(dir, "c.db"), filepath.Join(dir, "shared.key")
	flags := []string{"--db", db, "--key", key}
	if code, _, msg := cli(append([]string{"principal", "add", "--tenant", "acme", "--name", "alice", "--role", "user"}, flags...)...); code != 0 {
		t.Fatalf("principal add: %s", msg)
	}
	if err, log := serveOnce(t, flags...); err != nil {
		t.Fatalf("serve: %v\n%s", err, log)
	}
	if err := os.Rename(db+".checkpoint", key+".checkpoint"); err != nil {
		t.Fatal(err)
	}
	err, log := serveOnce(t, flags...)
	if err != nil || !strings.Contains(log, "moved the checkpoint file "+key+".checkpoint to "+db+".checkpoint") {
		t.Fatalf("serve with the file at its older name: %v\n%s", err, log)
	}
	if _, err := os.Stat(db + ".checkpoint"); err != nil {
		t.Fatalf("the file at its name now: %v", err)
	}

	// Another store's file at the older name: it stays, and is named.
	other := filepath.Join(dir, "other.db")
	if code, _, msg := cli("principal", "add", "--db", other, "--tenant", "acme", "--name", "bob", "--role", "user"); code != 0 {
		t.Fatalf("principal add: %s", msg)
	}
	if err, log := serveOnce(t, "--db", other); err != nil {
		t.Fatalf("serve: %v\n%s", err, log)
	}
	copyFile(t, other+".checkpoint", key+".checkpoint")
	os.Remove(db + ".checkpoint")
	err, _ = serveOnce(t, flags...)
	if err == nil || !strings.Contains(err.Error(), "holds checkpoints of another store's logs (log name "+logNameOf(t, other)+")") {
		t.Fatalf("serve without its file, another store's at the older name = %v; want the refusal to say whose file that is", err)
	}
	if _, err := os.Stat(key + ".checkpoint"); err != nil {
		t.Fatalf("the other store's file was moved: %v", err)
	}
}

// logNameOf is the log name of the SQLite store db.
func logNameOf(t *testing.T, db string) string {
	t.Helper()
	code, vkey, msg := cli("log", "key", "--tenant", "acme", "--db", db)
	if code != 0 {
		t.Fatalf("log key: %s", msg)
	}
	name, _, _ := strings.Cut(vkey, "+")
	return strings.TrimSuffix(name, "/acme")
}
