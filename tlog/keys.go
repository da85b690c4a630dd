package tlog

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Server key file.
//
// The server key lives in a file outside the database, so that a copy of the
// database alone reveals no sealed secret and cannot be used to forge
// checkpoints. It is a small text file, mode 0600:
//
//	custody-server-key v1
//	seal <base64 std of 32 random bytes: the AES-256-GCM sealing key>
//	sign <base64 std of a 32-byte Ed25519 seed: the server signing key>
//
// Each line ends with "\n"; nothing else is allowed. Losing the file makes
// every sealed value unreadable and changes the server's signing identity, so
// operators must back it up together with (but stored apart from) the
// database.
const keyFileHeader = "custody-server-key v1"

// ServerKey holds the server's sealing key and signing key. Load it with
// [LoadOrCreateServerKey]. A ServerKey is immutable and safe for concurrent
// use.
type ServerKey struct {
	aead cipher.AEAD
	sign ed25519.PrivateKey
}

// LoadOrCreateServerKey reads the server key file at path, or, if no file
// exists there, generates a new key and creates the file (mode 0600) without
// ever exposing a partly written file (creating missing parent directories
// with mode 0700): the key is written to a temporary file
// in the same directory, synced, then linked into place, so a concurrent
// creator cannot be silently overwritten. created reports whether a new key
// was generated.
//
// An existing file that is unreadable, malformed or readable by group or
// others is an error wrapping [ErrBadKeyFile]; it is never replaced.
func LoadOrCreateServerKey(path string) (key *ServerKey, created bool, err error) {
	key, err = loadServerKey(path)
	if err == nil {
		return key, false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, false, err
	}
	var seal, seed [32]byte
	rand.Read(seal[:])
	rand.Read(seed[:])
	text := fmt.Appendf(nil, "%s\nseal %s\nsign %s\n", keyFileHeader,
		base64.StdEncoding.EncodeToString(seal[:]), base64.StdEncoding.EncodeToString(seed[:]))
	switch err := writeNewFile(path, text); {
	case errors.Is(err, fs.ErrExist):
		// Someone else created it first; use theirs.
		key, err := loadServerKey(path)
		return key, false, err
	case err != nil:
		return nil, false, fmt.Errorf("tlog: creating server key file %s: %w", path, err)
	}
	key, err = parseServerKey(text)
	if err != nil {
		return nil, false, fmt.Errorf("tlog: server key file %s: %w", path, err)
	}
	return key, true, nil
}

func loadServerKey(path string) (*ServerKey, error) {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %s: %w; check the path and permissions of the server key file", ErrBadKeyFile, path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrBadKeyFile, path)
	}
	if perm := fi.Mode().Perm(); runtime.GOOS != "windows" && perm&0o077 != 0 {
		return nil, fmt.Errorf("%w: %s has mode %04o, which lets other users read the server's secrets; run `chmod 600 %s` (and consider rotating secrets if it was exposed)",
			ErrBadKeyFile, path, perm, path)
	}
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w; check that the server runs as the file's owner", ErrBadKeyFile, path, err)
	}
	key, err := parseServerKey(text)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w; restore the file from backup (deleting it makes a new key: sealed data becomes unreadable and the server's signing identity changes)",
			ErrBadKeyFile, path, err)
	}
	return key, nil
}

func parseServerKey(text []byte) (*ServerKey, error) {
	lines := strings.Split(string(text), "\n")
	if len(lines) != 4 || lines[3] != "" {
		return nil, fmt.Errorf("want 3 newline-terminated lines (%q, \"seal ...\", \"sign ...\")", keyFileHeader)
	}
	if lines[0] != keyFileHeader {
		return nil, fmt.Errorf("line 1 is %.40q, want %q", lines[0], keyFileHeader)
	}
	field := func(n int, name string) ([]byte, error) {
		rest, ok := strings.CutPrefix(lines[n-1], name+" ")
		if !ok {
			return nil, fmt.Errorf("line %d does not start with %q", n, name+" ")
		}
		b, err := base64.StdEncoding.DecodeString(rest)
		if err != nil || len(b) != 32 {
			return nil, fmt.Errorf("line %d: %s value is not 32 bytes of base64", n, name)
		}
		return b, nil
	}
	seal, err := field(2, "seal")
	if err != nil {
		return nil, err
	}
	seed, err := field(3, "sign")
	if err != nil {
		return nil, err
	}
	return newServerKey(seal, seed)
}

func newServerKey(seal, seed []byte) (*ServerKey, error) {
	block, err := aes.NewCipher(seal)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &ServerKey{aead: aead, sign: ed25519.NewKeyFromSeed(seed)}, nil
}

// writeNewFile creates path with contents text and mode 0600, failing with
// an error wrapping fs.ErrExist if path already exists.
func writeNewFile(path string, text []byte) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after a successful link this removes the extra name only
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(text); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return err
		}
		// Filesystems without hard links: fall back to rename after a
		// last check, accepting the (tiny) race with a concurrent creator.
		if _, statErr := os.Lstat(path); statErr == nil {
			return fs.ErrExist
		}
		if err := os.Rename(tmp, path); err != nil {
			return err
		}
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync() // best effort: make the new name durable
		d.Close()
	}
	return nil
}

// Seal encrypts and authenticates plaintext with AES-256-GCM under the
// sealing key, binding it to additional (which is not stored: the same bytes
// must be given to Open, e.g. a tenant and record id). The result is
// nonce || ciphertext || tag, with a fresh random 12-byte nonce.
func (k *ServerKey) Seal(plaintext, additional []byte) ([]byte, error) {
	nonce := make([]byte, k.aead.NonceSize(), k.aead.NonceSize()+len(plaintext)+k.aead.Overhead())
	rand.Read(nonce)
	return k.aead.Seal(nonce, nonce, plaintext, additional), nil
}

// Open reverses [ServerKey.Seal]. Any failure (tampering, truncation, a
// different key or different additional data) wraps [ErrSealBroken].
func (k *ServerKey) Open(sealed, additional []byte) ([]byte, error) {
	ns := k.aead.NonceSize()
	if len(sealed) < ns+k.aead.Overhead() {
		return nil, fmt.Errorf("%w: %d bytes is too short", ErrSealBroken, len(sealed))
	}
	pt, err := k.aead.Open(nil, sealed[:ns], sealed[ns:], additional)
	if err != nil {
		return nil, fmt.Errorf("%w: authentication failed", ErrSealBroken)
	}
	if pt == nil {
		pt = []byte{}
	}
	return pt, nil
}

// SigningKey returns (a copy of) the server's Ed25519 private key. It signs
// checkpoints and the entries whose actor is "server".
func (k *ServerKey) SigningKey() ed25519.PrivateKey {
	return bytes.Clone(k.sign)
}

// PublicKey returns the server's Ed25519 public key.
func (k *ServerKey) PublicKey() ed25519.PublicKey {
	return k.sign.Public().(ed25519.PublicKey)
}

// GeneratePrincipalKey returns a new random Ed25519 key pair for a principal.
func GeneratePrincipalKey() (ed25519.PublicKey, ed25519.PrivateKey, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("tlog: generating principal key: %w", err)
	}
	return pub, priv, nil
}
