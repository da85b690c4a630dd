package tlog

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
)

// Checkpoint is a commitment to the tree of a given size, in the C2SP
// tlog-checkpoint format (https://c2sp.org/tlog-checkpoint). Its note body is
//
//	<origin>\n<size in decimal>\n<base64 std root hash>\n
//
// and the signed form is a signed note (https://c2sp.org/signed-note): the
// body, a blank line, then one "— <key name> <base64 sig>" line per signer.
// This package produces no extension lines and accepts none.
type Checkpoint struct {
	Origin string // unique log identity, e.g. "custody.example.com/log"
	Size   uint64 // number of leaves
	Root   []byte // RFC 6962 root hash of the first Size leaves
}

// Marshal returns the checkpoint note body (the text that is signed).
func (c Checkpoint) Marshal() []byte {
	return fmt.Appendf(nil, "%s\n%d\n%s\n", c.Origin, c.Size, base64.StdEncoding.EncodeToString(c.Root))
}

// SignCheckpoint returns the signed note text for c, signed by s. The origin
// must be non-empty and printable on one line, and the root a SHA-256 hash.
func SignCheckpoint(c Checkpoint, s note.Signer) ([]byte, error) {
	if err := checkOrigin(c.Origin); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadCheckpoint, err)
	}
	if len(c.Root) != HashSize {
		return nil, fmt.Errorf("%w: root hash is %d bytes, want %d", ErrBadCheckpoint, len(c.Root), HashSize)
	}
	msg, err := note.Sign(&note.Note{Text: string(c.Marshal())}, s)
	if err != nil {
		return nil, fmt.Errorf("tlog: signing checkpoint: %w", err)
	}
	return msg, nil
}

// OpenCheckpoint verifies that msg is a signed note carrying a valid
// signature by v, and parses its body as a checkpoint for origin. Signatures
// by other keys are ignored, but at least one must be by v. Every failure
// wraps [ErrBadCheckpoint].
func OpenCheckpoint(msg []byte, origin string, v note.Verifier) (Checkpoint, error) {
	if v == nil {
		return Checkpoint{}, fmt.Errorf("%w: no verifier", ErrBadCheckpoint)
	}
	n, err := note.Open(msg, note.VerifierList(v))
	if err != nil {
		if _, ok := errors.AsType[*note.UnverifiedNoteError](err); ok {
			return Checkpoint{}, fmt.Errorf("%w: not signed by %s+%08x", ErrBadCheckpoint, v.Name(), v.KeyHash())
		}
		return Checkpoint{}, fmt.Errorf("%w: %w", ErrBadCheckpoint, err)
	}
	c, err := parseCheckpoint(n.Text)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("%w: %w", ErrBadCheckpoint, err)
	}
	if c.Origin != origin {
		return Checkpoint{}, fmt.Errorf("%w: origin %q, want %q", ErrBadCheckpoint, c.Origin, origin)
	}
	return c, nil
}

// parseCheckpoint parses a note body strictly: exactly three lines, a
// decimal size without sign or leading zeros, a canonical base64 32-byte root.
func parseCheckpoint(text string) (Checkpoint, error) {
	lines := strings.Split(text, "\n")
	if len(lines) != 4 || lines[3] != "" {
		return Checkpoint{}, fmt.Errorf("checkpoint body has %d lines, want 3", strings.Count(text, "\n"))
	}
	origin, sizeText, rootText := lines[0], lines[1], lines[2]
	if err := checkOrigin(origin); err != nil {
		return Checkpoint{}, err
	}
	size, err := strconv.ParseUint(sizeText, 10, 64)
	if err != nil || strconv.FormatUint(size, 10) != sizeText {
		return Checkpoint{}, fmt.Errorf("checkpoint size %q is not a canonical decimal", sizeText)
	}
	root, err := base64.StdEncoding.DecodeString(rootText)
	if err != nil || len(root) != HashSize || base64.StdEncoding.EncodeToString(root) != rootText {
		return Checkpoint{}, fmt.Errorf("checkpoint root %q is not a base64 SHA-256 hash", rootText)
	}
	return Checkpoint{Origin: origin, Size: size, Root: root}, nil
}

func checkOrigin(origin string) error {
	if origin == "" {
		return errors.New("empty origin")
	}
	for _, r := range origin {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("origin %q contains a control character", origin)
		}
	}
	return nil
}

// NewNoteSigner returns a note signer and the matching verifier for the
// Ed25519 key priv under the key name name (conventionally the checkpoint
// origin). The keys are those note.GenerateKey would encode for the same key
// pair, so the verifier key can be published as text: see
// note.NewEd25519VerifierKey. The name must be non-empty and contain no
// spaces or '+'.
func NewNoteSigner(name string, priv ed25519.PrivateKey) (note.Signer, note.Verifier, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return nil, nil, fmt.Errorf("tlog: note key %q: private key is %d bytes, want %d", name, len(priv), ed25519.PrivateKeySize)
	}
	// vkey is "<name>+<8 hex key hash>+<base64(0x01 || pub)>". The key hash
	// depends only on the name and the public key, so the signer key reuses it.
	vkey, err := note.NewEd25519VerifierKey(name, priv.Public().(ed25519.PublicKey))
	if err != nil {
		return nil, nil, fmt.Errorf("tlog: note key %q: %w", name, err)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return nil, nil, fmt.Errorf("tlog: note key %q: %w", name, err)
	}
	const algEd25519 = 0x01
	skey := fmt.Sprintf("PRIVATE+KEY+%s+%08x+%s", name, v.KeyHash(),
		base64.StdEncoding.EncodeToString(append([]byte{algEd25519}, priv.Seed()...)))
	s, err := note.NewSigner(skey)
	if err != nil {
		return nil, nil, fmt.Errorf("tlog: note key %q: %w", name, err)
	}
	return s, v, nil
}
