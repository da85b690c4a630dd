package tlog

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

func TestServerKeyCreateAndReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "server.key")
	k1, created, err := LoadOrCreateServerKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if !created {
		t.Error("first load did not report created")
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fi.Mode().Perm(), os.FileMode(0o600); runtime.GOOS != "windows" && got != want {
		t.Errorf("key file mode %v, want %v", got, want)
	}
	text, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(text), keyFileHeader+"\nseal ") {
		t.Errorf("unexpected key file:\n%s", text)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}

	k2, created, err := LoadOrCreateServerKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if created {
		t.Error("second load reported created")
	}
	if !k1.SigningKey().Equal(k2.SigningKey()) {
		t.Error("reloaded signing key differs")
	}
	if !k1.PublicKey().Equal(k2.SigningKey().Public()) {
		t.Error("PublicKey does not match SigningKey")
	}
	sealed, err := k1.Seal([]byte("secret"), []byte("acme/rec_1"))
	if err != nil {
		t.Fatal(err)
	}
	pt, err := k2.Open(sealed, []byte("acme/rec_1"))
	if err != nil {
		t.Fatalf("reloaded key cannot open: %v", err)
	}
	if got, want := string(pt), "secret"; got != want {
		t.Errorf("Open = %q, want %q", got, want)
	}

	// A different file is a different key.
	k3, _, err := LoadOrCreateServerKey(filepath.Join(t.TempDir(), "other.key"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k3.Open(sealed, []byte("acme/rec_1")); !errors.Is(err, ErrSealBroken) {
		t.Errorf("another key opened the seal: %v", err)
	}
	if k3.SigningKey().Equal(k1.SigningKey()) {
		t.Error("two new key files have the same signing key")
	}
}

func TestServerKeyConcurrentCreate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.key")
	const n = 8
	keys := make([]*ServerKey, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			k, _, err := LoadOrCreateServerKey(path)
			if err != nil {
				t.Error(err)
				return
			}
			keys[i] = k
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for _, k := range keys[1:] {
		if !k.SigningKey().Equal(keys[0].SigningKey()) {
			t.Fatal("concurrent creators ended up with different keys")
		}
	}
}

func TestSealOpen(t *testing.T) {
	k, _, err := LoadOrCreateServerKey(filepath.Join(t.TempDir(), "k"))
	if err != nil {
		t.Fatal(err)
	}
	ad := []byte("tenant/record")
	for _, pt := range [][]byte{nil, {}, []byte("x"), bytes.Repeat([]byte("abc"), 1000)} {
		sealed, err := k.Seal(pt, ad)
		if err != nil {
			t.Fatal(err)
		}
		got, err := k.Open(sealed, ad)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		if !bytes.Equal(got, pt) || got == nil {
			t.Errorf("Open = %q, want %q (non-nil)", got, pt)
		}
		again, _ := k.Seal(pt, ad)
		if bytes.Equal(again, sealed) {
			t.Error("two seals of the same plaintext are identical (nonce reuse)")
		}
	}

	sealed, _ := k.Seal([]byte("the secret"), ad)
	for i := range sealed {
		b := bytes.Clone(sealed)
		b[i] ^= 0x20
		if _, err := k.Open(b, ad); !errors.Is(err, ErrSealBroken) {
			t.Fatalf("Open with byte %d flipped = %v, want ErrSealBroken", i, err)
		}
	}
	for _, tc := range []struct {
		name   string
		sealed []byte
		ad     []byte
	}{
		{"wrong additional data", sealed, []byte("tenant/other")},
		{"no additional data", sealed, nil},
		{"truncated", sealed[:len(sealed)-1], ad},
		{"too short", sealed[:10], ad},
		{"empty", nil, ad},
		{"extended", append(bytes.Clone(sealed), 0), ad},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := k.Open(tc.sealed, tc.ad); !errors.Is(err, ErrSealBroken) {
				t.Errorf("Open = %v, want ErrSealBroken", err)
			}
		})
	}
}

func TestServerKeyMalformed(t *testing.T) {
	const seal = "seal AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n"
	const sign = "sign AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=\n"
	const header = keyFileHeader + "\n"
	if _, err := parseServerKey([]byte(header + seal + sign)); err != nil {
		t.Fatalf("the well-formed base case is rejected: %v", err)
	}
	for _, tc := range []struct {
		name, text, want string
	}{
		{"empty", "", "3 newline-terminated lines"},
		{"wrong header", "custody-server-key v2\n" + seal + sign, "line 1"},
		{"missing newline", header + seal + strings.TrimSuffix(sign, "\n"), "3 newline-terminated lines"},
		{"extra line", header + seal + sign + "x\n", "3 newline-terminated lines"},
		{"swapped lines", header + sign + seal, "line 2"},
		{"bad base64", header + "seal !!!\n" + sign, "line 2"},
		{"short seal", header + "seal AAAA\n" + sign, "line 2"},
		{"short seed", header + seal + "sign AAAA\n", "line 3"},
		{"crlf", strings.ReplaceAll(header+seal+sign, "\n", "\r\n"), "line 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "server.key")
			if err := os.WriteFile(path, []byte(tc.text), 0o600); err != nil {
				t.Fatal(err)
			}
			_, _, err := LoadOrCreateServerKey(path)
			if !errors.Is(err, ErrBadKeyFile) {
				t.Fatalf("err = %v, want ErrBadKeyFile", err)
			}
			for _, want := range []string{path, tc.want, "restore the file from backup"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
			if got, _ := os.ReadFile(path); string(got) != tc.text {
				t.Error("malformed key file was modified")
			}
		})
	}
}

func TestServerKeyFileProblems(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("file modes are not enforced on Windows")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "server.key")
	if _, _, err := LoadOrCreateServerKey(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := LoadOrCreateServerKey(path)
	if !errors.Is(err, ErrBadKeyFile) || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("world-readable key file: err = %v, want ErrBadKeyFile suggesting chmod 600", err)
	}
	if _, _, err := LoadOrCreateServerKey(dir); !errors.Is(err, ErrBadKeyFile) {
		t.Errorf("directory as key file: err = %v, want ErrBadKeyFile", err)
	}
}

func TestGeneratePrincipalKey(t *testing.T) {
	pub, priv, err := GeneratePrincipalKey()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(pub), ed25519.PublicKeySize; got != want {
		t.Errorf("len(pub) = %d, want %d", got, want)
	}
	e := sampleEntry()
	e.Sign(priv)
	if err := e.Verify(pub); err != nil {
		t.Errorf("entry signed with a generated key does not verify: %v", err)
	}
	pub2, _, _ := GeneratePrincipalKey()
	if pub.Equal(pub2) {
		t.Error("two generated keys are equal")
	}
}

func TestServerKeySigns(t *testing.T) {
	k, _, err := LoadOrCreateServerKey(filepath.Join(t.TempDir(), "k"))
	if err != nil {
		t.Fatal(err)
	}
	e := &Entry{Transition: "policy", Actor: "server"}
	e.Sign(k.SigningKey())
	if err := e.Verify(k.PublicKey()); err != nil {
		t.Fatal(err)
	}
	s, v, err := NewNoteSigner(testOrigin, k.SigningKey())
	if err != nil {
		t.Fatal(err)
	}
	msg, err := SignCheckpoint(Checkpoint{Origin: testOrigin, Size: 0, Root: EmptyRoot()}, s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenCheckpoint(msg, testOrigin, v); err != nil {
		t.Fatal(err)
	}
}
