package logmonitor

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Entry is one decoded leaf (docs/log-format.md, section 6).
type Entry struct {
	Tenant        string            `json:"tenant"`
	RecordID      string            `json:"record_id,omitempty"`
	RecordIDs     []string          `json:"record_ids,omitempty"`
	Transition    string            `json:"transition"`
	PrevState     string            `json:"prev_state,omitempty"`
	NewState      string            `json:"new_state,omitempty"`
	BodyHash      []byte            `json:"body_hash,omitempty"`
	PolicyVersion string            `json:"policy_version,omitempty"`
	Actor         string            `json:"actor"`
	Time          time.Time         `json:"time"`
	Details       map[string]string `json:"details,omitempty"`
	KeyID         string            `json:"key_id"`
	Signature     []byte            `json:"signature"`

	signed []byte // the leaf up to the signature: what it signs
}

// magic opens every leaf.
const magic = "custody-entry\x00"

// ErrMalformed is wrapped by DecodeLeaf's errors.
var ErrMalformed = errors.New("malformed leaf")

// reader reads the leaf encoding strictly.
type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: at byte %d: %s", ErrMalformed, r.off, fmt.Sprintf(format, args...))
	}
}

// uvarint reads an unsigned LEB128 varint in its shortest form.
func (r *reader) uvarint(what string) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.off:])
	if n <= 0 || n != len(binary.AppendUvarint(nil, v)) {
		r.fail("%s: not a shortest-form varint", what)
		return 0
	}
	r.off += n
	return v
}

// bytes reads uvarint(length) ‖ raw bytes.
func (r *reader) bytes(what string) []byte {
	n := r.uvarint(what)
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)-r.off) {
		r.fail("%s: length %d past the end", what, n)
		return nil
	}
	p := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return p
}

func (r *reader) str(what string) string { return string(r.bytes(what)) }

// fixed reads n raw bytes.
func (r *reader) fixed(n int, what string) []byte {
	if r.err != nil {
		return make([]byte, n)
	}
	if len(r.b)-r.off < n {
		r.fail("%s: truncated", what)
		return make([]byte, n)
	}
	p := r.b[r.off : r.off+n]
	r.off += n
	return p
}

// DecodeLeaf decodes a leaf of encoding version 1, refusing every
// non-canonical form: non-minimal varints, lengths past the end, detail
// keys not strictly ascending, nanoseconds of 10⁹ or more, trailing bytes.
func DecodeLeaf(b []byte) (*Entry, error) {
	if !bytes.HasPrefix(b, []byte(magic)) {
		return nil, fmt.Errorf("%w: it does not start with the entry magic", ErrMalformed)
	}
	r := &reader{b: b, off: len(magic)}
	if v := r.uvarint("version"); r.err == nil && v != 1 {
		return nil, fmt.Errorf("%w: encoding version %d (this monitor reads version 1)", ErrMalformed, v)
	}
	e := &Entry{Details: map[string]string{}}
	e.Tenant = r.str("tenant")
	e.RecordID = r.str("record id")
	n := r.uvarint("record ids")
	if n > uint64(len(b)) {
		r.fail("%d record ids in a leaf of %d bytes", n, len(b))
	}
	for i := uint64(0); i < n && r.err == nil; i++ {
		e.RecordIDs = append(e.RecordIDs, r.str("record id"))
	}
	e.Transition = r.str("transition")
	e.PrevState = r.str("previous state")
	e.NewState = r.str("new state")
	e.BodyHash = r.bytes("body hash")
	e.PolicyVersion = r.str("policy version")
	e.Actor = r.str("actor")
	secs := binary.BigEndian.Uint64(r.fixed(8, "time"))
	nanos := binary.BigEndian.Uint32(r.fixed(4, "time"))
	if r.err == nil && nanos >= 1e9 {
		r.fail("nanoseconds %d out of range", nanos)
	}
	e.Time = time.Unix(int64(secs), int64(nanos)).UTC()
	m := r.uvarint("details")
	if m > uint64(len(b)) {
		r.fail("%d details in a leaf of %d bytes", m, len(b))
	}
	prev := ""
	for i := uint64(0); i < m && r.err == nil; i++ {
		k, v := r.str("detail key"), r.str("detail value")
		if i > 0 && k <= prev {
			r.fail("detail keys not strictly ascending (%q after %q)", k, prev)
		}
		e.Details[k], prev = v, k
	}
	e.KeyID = r.str("key id")
	e.signed = b[:r.off]
	e.Signature = r.bytes("signature")
	if r.err != nil {
		return nil, r.err
	}
	if r.off != len(b) {
		return nil, fmt.Errorf("%w: %d trailing bytes", ErrMalformed, len(b)-r.off)
	}
	return e, nil
}

// KeyID is section 6's key id of pub: lowercase hex of the first 8 bytes
// of its SHA-256.
func KeyID(pub ed25519.PublicKey) string {
	h := sha256.Sum256(pub)
	return hex.EncodeToString(h[:8])
}

// Signers checks entries' signatures in log order: entries of actor
// "server", and every principal entry, by the server key (the key of the
// log's verifier key); an entry of actor T/N by the public_key of the
// latest principal, principal_update or principal_rotate entry of tenant T
// naming N before it.
type Signers struct {
	server     ed25519.PublicKey
	principals map[string]ed25519.PublicKey // "tenant/name" → key
}

// NewSigners returns the signers of a log whose server key is server.
func NewSigners(server ed25519.PublicKey) *Signers {
	return &Signers{server: server, principals: map[string]ed25519.PublicKey{}}
}

// principalKinds are the entries that state a principal's public key.
var principalKinds = map[string]bool{"principal": true, "principal_update": true, "principal_rotate": true}

// Check verifies e's signature and key id, then learns the key a principal
// entry states.
func (s *Signers) Check(e *Entry) error {
	key := s.server
	if e.Actor != "server" && !strings.HasPrefix(e.Transition, "principal") {
		var ok bool
		if key, ok = s.principals[e.Actor]; !ok {
			return fmt.Errorf("the actor %q has no principal entry before this one", e.Actor)
		}
	}
	if e.KeyID != KeyID(key) {
		return fmt.Errorf("key id %s, but the key of %q is %s", e.KeyID, e.Actor, KeyID(key))
	}
	if !ed25519.Verify(key, e.signed, e.Signature) {
		return fmt.Errorf("the signature by %q does not verify", e.Actor)
	}
	if principalKinds[e.Transition] {
		pub, err := hex.DecodeString(e.Details["public_key"])
		if err != nil || len(pub) != ed25519.PublicKeySize {
			return fmt.Errorf("a %s entry with public_key %q, not a hex Ed25519 key", e.Transition, e.Details["public_key"])
		}
		s.principals[e.Tenant+"/"+e.Details["name"]] = pub
	}
	return nil
}

// Summary is one line saying what e records, for people.
func (e *Entry) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s by %s", e.Transition, e.Actor)
	switch {
	case e.RecordID != "":
		fmt.Fprintf(&b, ": record %s", e.RecordID)
		if e.PrevState != "" || e.NewState != "" {
			fmt.Fprintf(&b, " %s→%s", orNone(e.PrevState), orNone(e.NewState))
		}
	case len(e.RecordIDs) > 0:
		fmt.Fprintf(&b, ": %d records → %s", len(e.RecordIDs), e.NewState)
	case e.NewState != "":
		fmt.Fprintf(&b, ": %s", e.NewState)
	}
	keys := make([]string, 0, len(e.Details))
	for k := range e.Details {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var shown []string
	for _, k := range keys {
		switch k {
		case "name", "namespace", "key", "class", "subject", "action", "owner", "channel", "reason", "session", "cause":
			if v := e.Details[k]; v != "" {
				shown = append(shown, k+"="+quoteIfNeeded(v))
			}
		}
	}
	if len(shown) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(shown, " "))
	}
	return b.String()
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func quoteIfNeeded(s string) string {
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	if strings.ContainsAny(s, " \t\n\"=") {
		return fmt.Sprintf("%q", s)
	}
	return s
}
