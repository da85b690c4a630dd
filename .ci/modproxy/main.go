// Command modproxy writes a Go module proxy directory (GOPROXY=file://DIR)
// that serves this repository's committed tree as one version of its
// module, so that .ci/install.sh can run the install command README.md
// documents, exactly as written, before any version is published:
//
//	go run ./.ci/modproxy -dir /tmp/proxy -version v0.1.0-ci
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

func main() {
	dir := flag.String("dir", "", "the proxy `directory` to write")
	version := flag.String("version", "v0.1.0-ci", "the module `version` to serve the tree as")
	rev := flag.String("rev", "HEAD", "the git `revision` to serve (committed files only)")
	flag.Parse()
	if err := run(*dir, *version, *rev); err != nil {
		fmt.Fprintf(os.Stderr, "modproxy: %v\n", err)
		os.Exit(1)
	}
}

func git(args ...string) ([]byte, error) {
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return out, nil
}

func run(dir, version, rev string) error {
	if dir == "" {
		return fmt.Errorf("give -dir")
	}
	root, err := git("rev-parse", "--show-toplevel")
	if err != nil {
		return err
	}
	gomod, err := git("show", rev+":go.mod")
	if err != nil {
		return err
	}
	path := modfile.ModulePath(gomod)
	m := module.Version{Path: path, Version: version}
	if err := module.Check(path, version); err != nil {
		return err
	}
	when, err := git("log", "-1", "--format=%cI", rev)
	if err != nil {
		return err
	}
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(string(when)))
	if err != nil {
		return err
	}
	esc, err := module.EscapePath(path)
	if err != nil {
		return err
	}
	at := filepath.Join(dir, esc, "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		return err
	}
	// The committed tree, as git archive writes it (a worktree's .git is a
	// file, which modzip.CreateFromVCS does not take).
	tree, err := os.MkdirTemp("", "modproxy-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tree)
	archive := exec.Command("sh", "-c", `git -C "$1" archive "$2" | tar -x -C "$3"`, "sh", strings.TrimSpace(string(root)), rev, tree)
	if out, err := archive.CombinedOutput(); err != nil {
		return fmt.Errorf("git archive %s: %v: %s", rev, err, out)
	}
	var zip bytes.Buffer
	if err := modzip.CreateFromDir(&zip, m, tree); err != nil {
		return err
	}
	info, _ := json.Marshal(map[string]any{"Version": version, "Time": t.UTC()})
	for name, b := range map[string][]byte{"list": []byte(version + "\n"), version + ".info": info, version + ".mod": gomod, version + ".zip": zip.Bytes()} {
		if err := os.WriteFile(filepath.Join(at, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
