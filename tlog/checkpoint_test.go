package tlog

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"
)

const testOrigin = "custody.example.com/log"

func testNoteKey(t *testing.T, name string, seedByte byte) (note.Signer, note.Verifier) {
	t.Helper()
	s, v, err := NewNoteSigner(name, testKey(seedByte))
	if err != nil {
		t.Fatal(err)
	}
	return s, v
}

func TestCheckpointMarshalKnownAnswer(t *testing.T) {
	c := Checkpoint{Origin: testOrigin, Size: 8, Root: hd(t, katRoots[8])}
	const want = "custody.example.com/log\n8\nXcnaeacGWamtVZy3Ad7ZoqudgjqtL0lgz+Nw7/RgQyg=\n"
	if got := string(c.Marshal()); got != want {
		t.Errorf("Marshal() = %q, want %q", got, want)
	}
}

func TestCheckpointRoundTrip(t *testing.T) {
	s, v := testNoteKey(t, testOrigin, 1)
	for _, size := range []uint64{0, 1, 8, 1<<64 - 1} {
		root := EmptyRoot()
		if size == 8 {
			root = hd(t, katRoots[8])
		}
		c := Checkpoint{Origin: testOrigin, Size: size, Root: root}
		msg, err := SignCheckpoint(c, s)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(msg, c.Marshal()) {
			t.Errorf("signed note does not start with the body")
		}
		got, err := OpenCheckpoint(msg, testOrigin, v)
		if err != nil {
			t.Fatalf("OpenCheckpoint: %v", err)
		}
		if got.Origin != c.Origin || got.Size != c.Size || !bytes.Equal(got.Root, c.Root) {
			t.Errorf("OpenCheckpoint = %+v, want %+v", got, c)
		}
	}
}

// TestCheckpointNoteInterop checks that NewNoteSigner produces the same keys
// note.GenerateKey would, by verifying with a verifier parsed from text.
func TestCheckpointNoteInterop(t *testing.T) {
	priv := testKey(9)
	s, _, err := NewNoteSigner(testOrigin, priv)
	if err != nil {
		t.Fatal(err)
	}
	vkey, err := note.NewEd25519VerifierKey(testOrigin, priv.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.KeyHash(), v.KeyHash(); got != want {
		t.Fatalf("signer key hash %08x, verifier %08x", got, want)
	}
	msg, err := SignCheckpoint(Checkpoint{Origin: testOrigin, Size: 3, Root: hd(t, katRoots[3])}, s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := note.Open(msg, note.VerifierList(v)); err != nil {
		t.Fatalf("note.Open with text verifier key: %v", err)
	}
}

func TestCheckpointRejects(t *testing.T) {
	s, v := testNoteKey(t, testOrigin, 1)
	_, otherV := testNoteKey(t, testOrigin, 2)
	otherS, _ := testNoteKey(t, "other.example.com/log", 3)
	good := Checkpoint{Origin: testOrigin, Size: 5, Root: hd(t, katRoots[5])}
	msg, err := SignCheckpoint(good, s)
	if err != nil {
		t.Fatal(err)
	}
	sign := func(body string) []byte {
		t.Helper()
		m, err := note.Sign(&note.Note{Text: body}, s)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	root := "Tju7H3tHjc/nH7YxYxUZo7yhLJrvyhYSv85ME6hiZNQ="
	for _, tc := range []struct {
		name   string
		msg    []byte
		origin string
		v      note.Verifier
	}{
		{"wrong key", msg, testOrigin, otherV},
		{"nil verifier", msg, testOrigin, nil},
		{"wrong origin", msg, "other.example.com/log", v},
		{"tampered size", replace(t, msg, "\n5\n", "\n6\n"), testOrigin, v},
		{"tampered root", replace(t, msg, root[:4], "AAAA"), testOrigin, v},
		{"tampered signature", replace(t, msg, "\n— "+testOrigin+" ", "\n— "+testOrigin+" A"), testOrigin, v},
		{"signed by another name only", mustSign(t, good, otherS), testOrigin, v},
		{"not a note", []byte("hello"), testOrigin, v},
		{"extension line", sign(testOrigin + "\n5\n" + root + "\nextra\n"), testOrigin, v},
		{"two lines", sign(testOrigin + "\n5\n"), testOrigin, v},
		{"leading zero size", sign(testOrigin + "\n05\n" + root + "\n"), testOrigin, v},
		{"signed size", sign(testOrigin + "\n+5\n" + root + "\n"), testOrigin, v},
		{"size overflow", sign(testOrigin + "\n18446744073709551616\n" + root + "\n"), testOrigin, v},
		{"short root", sign(testOrigin + "\n5\nAAAA\n"), testOrigin, v},
		{"unpadded root", sign(testOrigin + "\n5\n" + strings.TrimRight(root, "=") + "\n"), testOrigin, v},
		{"empty origin", sign("\n5\n" + root + "\n"), "", v},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := OpenCheckpoint(tc.msg, tc.origin, tc.v)
			if !errors.Is(err, ErrBadCheckpoint) {
				t.Errorf("OpenCheckpoint = %+v, %v; want ErrBadCheckpoint", c, err)
			}
		})
	}
}

// replace replaces the first old in msg with new, failing if there is none.
func replace(t *testing.T, msg []byte, old, new string) []byte {
	t.Helper()
	if !bytes.Contains(msg, []byte(old)) {
		t.Fatalf("%q not found in %q", old, msg)
	}
	return bytes.Replace(msg, []byte(old), []byte(new), 1)
}

func mustSign(t *testing.T, c Checkpoint, s note.Signer) []byte {
	t.Helper()
	m, err := SignCheckpoint(c, s)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestCheckpointCosigned(t *testing.T) {
	s, v := testNoteKey(t, testOrigin, 1)
	w, _ := testNoteKey(t, "witness.example.com", 7)
	body := Checkpoint{Origin: testOrigin, Size: 2, Root: hd(t, katRoots[2])}.Marshal()
	msg, err := note.Sign(&note.Note{Text: string(body)}, s, w)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenCheckpoint(msg, testOrigin, v); err != nil {
		t.Errorf("a checkpoint with an extra (unknown) cosignature should open: %v", err)
	}
}

func TestSignCheckpointRejects(t *testing.T) {
	s, _ := testNoteKey(t, testOrigin, 1)
	for _, tc := range []struct {
		name string
		c    Checkpoint
	}{
		{"empty origin", Checkpoint{Root: EmptyRoot()}},
		{"newline in origin", Checkpoint{Origin: "a\nb", Root: EmptyRoot()}},
		{"short root", Checkpoint{Origin: testOrigin, Root: []byte{1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := SignCheckpoint(tc.c, s); !errors.Is(err, ErrBadCheckpoint) {
				t.Errorf("SignCheckpoint = %v, want ErrBadCheckpoint", err)
			}
		})
	}
}

func TestNewNoteSignerRejects(t *testing.T) {
	for _, tc := range []struct {
		name, keyName string
		priv          ed25519.PrivateKey
	}{
		{"empty name", "", testKey(1)},
		{"space in name", "a b", testKey(1)},
		{"plus in name", "a+b", testKey(1)},
		{"short key", "a", testKey(1)[:32]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := NewNoteSigner(tc.keyName, tc.priv); err == nil {
				t.Error("NewNoteSigner succeeded")
			}
		})
	}
}
