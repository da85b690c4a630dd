package independent_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
)

// entry is a decoded leaf (docs/log-format.md, section 6).
type entry struct {
	Tenant, RecordID             string
	RecordIDs                    []string
	Transition, PrevState, State string
	BodyHash                     []byte
	PolicyVersion, Actor         string
	Seconds                      uint64
	Nanos                        uint32
	Details                      map[string]string
	KeyID                        string
	Signature                    []byte
	signed                       []byte // the signed bytes: the leaf up to the signature
}

// reader reads the leaf encoding, strictly.
type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("at byte %d: %s", r.off, what)
	}
}

func (r *reader) uvarint(what string) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.off:])
	if n <= 0 || n != len(binary.AppendUvarint(nil, v)) {
		r.fail(what + ": not a shortest-form varint")
		return 0
	}
	r.off += n
	return v
}

func (r *reader) raw(what string) []byte {
	n := r.uvarint(what)
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)-r.off) {
		r.fail(what + ": length past the end")
		return nil
	}
	p := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return p
}

func (r *reader) str(what string) string { return string(r.raw(what)) }

func (r *reader) fixed(n int) []byte {
	if r.err != nil {
		return make([]byte, n)
	}
	if len(r.b)-r.off < n {
		r.fail("time: truncated")
		return make([]byte, n)
	}
	p := r.b[r.off : r.off+n]
	r.off += n
	return p
}

const magic = "custody-entry\x00"

// decodeLeaf decodes a leaf as section 6 specifies.
func decodeLeaf(b []byte) (*entry, error) {
	if !bytes.HasPrefix(b, []byte(magic)) {
		return nil, errors.New("no entry magic")
	}
	r := &reader{b: b, off: len(magic)}
	if v := r.uvarint("version"); r.err == nil && v != 1 {
		return nil, fmt.Errorf("encoding version %d", v)
	}
	e := &entry{Details: map[string]string{}}
	e.Tenant = r.str("tenant")
	e.RecordID = r.str("record id")
	n := r.uvarint("record ids")
	for i := uint64(0); i < n && r.err == nil; i++ {
		e.RecordIDs = append(e.RecordIDs, r.str("record id"))
	}
	e.Transition = r.str("transition")
	e.PrevState = r.str("previous state")
	e.State = r.str("new state")
	e.BodyHash = r.raw("body hash")
	e.PolicyVersion = r.str("policy version")
	e.Actor = r.str("actor")
	e.Seconds = binary.BigEndian.Uint64(r.fixed(8))
	e.Nanos = binary.BigEndian.Uint32(r.fixed(4))
	if e.Nanos >= 1e9 {
		r.fail("nanoseconds out of range")
	}
	m := r.uvarint("details")
	prev := ""
	for i := uint64(0); i < m && r.err == nil; i++ {
		k, v := r.str("detail key"), r.str("detail value")
		if i > 0 && k <= prev {
			r.fail("detail keys not strictly ascending")
		}
		e.Details[k], prev = v, k
	}
	e.KeyID = r.str("key id")
	e.signed = b[:r.off]
	e.Signature = r.raw("signature")
	if r.err != nil {
		return nil, r.err
	}
	if r.off != len(b) {
		return nil, fmt.Errorf("%d trailing bytes", len(b)-r.off)
	}
	return e, nil
}

// keyID is section 6's KeyID of pub.
func keyID(pub ed25519.PublicKey) string {
	h := sha256.Sum256(pub)
	return hex.EncodeToString(h[:8])
}

// signers checks entry signatures in log order: the server key for actor
// "server" and principal entries, and for actor T/N the public_key of the
// latest principal entry of T/N before.
type signers struct {
	server     ed25519.PublicKey
	principals map[string]ed25519.PublicKey // tenant/name → key
}

func (s *signers) check(e *entry) error {
	key := s.server
	if e.Actor != "server" {
		var ok bool
		if key, ok = s.principals[e.Actor]; !ok {
			return fmt.Errorf("actor %q has no principal entry before this one", e.Actor)
		}
	}
	if e.KeyID != keyID(key) {
		return fmt.Errorf("key id %s, the actor %q's key is %s", e.KeyID, e.Actor, keyID(key))
	}
	if !ed25519.Verify(key, e.signed, e.Signature) {
		return fmt.Errorf("the signature by %q does not verify", e.Actor)
	}
	switch e.Transition {
	case "principal", "principal_update", "principal_rotate":
		pub, err := hex.DecodeString(e.Details["public_key"])
		if err != nil || len(pub) != ed25519.PublicKeySize {
			return fmt.Errorf("principal entry with public_key %q", e.Details["public_key"])
		}
		s.principals[e.Tenant+"/"+e.Details["name"]] = pub
	}
	return nil
}
