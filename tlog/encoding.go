package tlog

import (
	"bytes"
	"crypto/ed25519"
	"encoding/binary"
	"fmt"
	"slices"
	"time"
)

// EncodingVersion is the version of the entry encoding written by
// [Entry.SignedBytes] and [Entry.Leaf]. [ParseLeaf] accepts only this version.
const EncodingVersion = 1

// entryMagic starts every encoded entry. It keeps entry signatures from being
// valid for any other message signed with the same key (checkpoints are text
// and cannot start with a NUL-terminated string like this one).
const entryMagic = "custody-entry\x00"

// Encoding, version 1.
//
// All integers are unsigned varints (encoding/binary.AppendUvarint) written
// in their shortest form, except the time, which is fixed width big-endian.
// A "str" or "bytes" is uvarint(len) followed by len raw bytes; strings are
// not required to be UTF-8. Fields appear in this fixed order:
//
//	signed-bytes = magic version
//	               str(Tenant) str(RecordID)
//	               uvarint(len(RecordIDs)) str(RecordIDs[0]) ...
//	               str(Transition) str(PrevState) str(NewState)
//	               bytes(BodyHash) str(PolicyVersion) str(Actor)
//	               int64be(Time.Unix()) uint32be(Time.Nanosecond())
//	               uvarint(len(Details)) str(key) str(value) ...   (keys strictly ascending, bytewise)
//	               str(KeyID)
//	leaf         = signed-bytes bytes(Signature)
//	magic        = "custody-entry" 0x00
//	version      = uvarint(EncodingVersion)
//
// Nothing may follow the signature. The time's location is not encoded;
// ParseLeaf returns UTC. Nanoseconds must be below 1e9. Empty and nil slices
// and maps encode identically and parse as nil.
//
// This package treats BodyHash as opaque bytes. custody writes there
// HMAC-SHA256(salt, body), keyed with a random 32-byte salt of the record
// that is stored beside the record and never in the log, so that nobody
// holding a leaf can test guesses of a short body against it; records
// written before salts carry SHA-256(body); an erased record's later
// entries carry none. Since a leaf also holds the record's metadata
// (owner, namespace, key, audience, ...), custody serves the leaf bytes
// only to callers who may read the record, and everyone else the leaf
// hash alone, which is all that proofs need.

// SignedBytes returns the canonical encoding of every field of e except
// Signature. It is the message that [Entry.Sign] signs.
func (e *Entry) SignedBytes() []byte {
	return e.appendSigned(make([]byte, 0, e.sizeHint()))
}

// Leaf returns the canonical encoding of e including its signature. These
// exact bytes are the Merkle leaf: the tree stores [LeafHash] of them.
func (e *Entry) Leaf() []byte {
	b := e.appendSigned(make([]byte, 0, e.sizeHint()+binary.MaxVarintLen64+len(e.Signature)))
	return appendBytes(b, e.Signature)
}

// SignLeaf is Sign, returning e.Leaf(): the entry is encoded once, for
// both.
func (e *Entry) SignLeaf(priv ed25519.PrivateKey) []byte {
	if len(priv) != ed25519.PrivateKeySize {
		panic("tlog: Entry.Sign called with an invalid Ed25519 private key")
	}
	e.KeyID = KeyID(priv.Public().(ed25519.PublicKey))
	b := e.appendSigned(make([]byte, 0, e.sizeHint()+binary.MaxVarintLen64+ed25519.SignatureSize))
	e.Signature = ed25519.Sign(priv, b)
	return appendBytes(b, e.Signature)
}

func (e *Entry) sizeHint() int {
	n := len(entryMagic) + 1 + 12 + 12*binary.MaxVarintLen64
	n += len(e.Tenant) + len(e.RecordID) + len(e.Transition) + len(e.PrevState) + len(e.NewState)
	n += len(e.BodyHash) + len(e.PolicyVersion) + len(e.Actor) + len(e.KeyID)
	for _, id := range e.RecordIDs {
		n += binary.MaxVarintLen64 + len(id)
	}
	for k, v := range e.Details {
		n += 2*binary.MaxVarintLen64 + len(k) + len(v)
	}
	return n
}

func (e *Entry) appendSigned(b []byte) []byte {
	b = append(b, entryMagic...)
	b = binary.AppendUvarint(b, EncodingVersion)
	b = appendString(b, e.Tenant)
	b = appendString(b, e.RecordID)
	b = binary.AppendUvarint(b, uint64(len(e.RecordIDs)))
	for _, id := range e.RecordIDs {
		b = appendString(b, id)
	}
	b = appendString(b, e.Transition)
	b = appendString(b, e.PrevState)
	b = appendString(b, e.NewState)
	b = appendBytes(b, e.BodyHash)
	b = appendString(b, e.PolicyVersion)
	b = appendString(b, e.Actor)
	b = binary.BigEndian.AppendUint64(b, uint64(e.Time.Unix()))
	b = binary.BigEndian.AppendUint32(b, uint32(e.Time.Nanosecond()))
	keys := make([]string, 0, len(e.Details))
	for k := range e.Details {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = binary.AppendUvarint(b, uint64(len(keys)))
	for _, k := range keys {
		b = appendString(b, k)
		b = appendString(b, e.Details[k])
	}
	return appendString(b, e.KeyID)
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendBytes(b, p []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(p)))
	return append(b, p...)
}

// ParseLeaf decodes a leaf written by [Entry.Leaf]. It is strict: it rejects
// a wrong magic or version, non-minimal varints, lengths running past the
// end, unsorted or duplicate Details keys, out-of-range nanoseconds and
// trailing bytes, so that for every accepted b, Leaf(ParseLeaf(b)) == b.
// Errors wrap [ErrMalformedLeaf]. The signature is not verified.
func ParseLeaf(b []byte) (*Entry, error) {
	d := decoder{buf: b}
	if !bytes.HasPrefix(b, []byte(entryMagic)) {
		return nil, fmt.Errorf("%w: missing entry magic", ErrMalformedLeaf)
	}
	d.off = len(entryMagic)
	if v := d.uvarint("version"); d.err == nil && v != EncodingVersion {
		return nil, fmt.Errorf("%w: encoding version %d, want %d", ErrMalformedLeaf, v, EncodingVersion)
	}
	e := &Entry{}
	e.Tenant = d.str("tenant")
	e.RecordID = d.str("record id")
	if n := d.count("record ids"); n > 0 {
		e.RecordIDs = make([]string, n)
		for i := range e.RecordIDs {
			e.RecordIDs[i] = d.str("record ids")
		}
	}
	e.Transition = d.str("transition")
	e.PrevState = d.str("previous state")
	e.NewState = d.str("new state")
	e.BodyHash = d.bytes("body hash")
	e.PolicyVersion = d.str("policy version")
	e.Actor = d.str("actor")
	sec, nsec := d.fixed(8, "time"), d.fixed(4, "time")
	if d.err == nil {
		if nsec >= uint64(time.Second) {
			d.fail("time: %d nanoseconds", nsec)
		}
		e.Time = time.Unix(int64(sec), int64(nsec)).UTC()
	}
	if n := d.count("details"); n > 0 {
		e.Details = make(map[string]string, n)
		prev := ""
		for i := range n {
			k, v := d.str("details key"), d.str("details value")
			if d.err != nil {
				break
			}
			if i > 0 && k <= prev {
				d.fail("details keys not strictly ascending at %q", k)
				break
			}
			e.Details[k], prev = v, k
		}
	}
	e.KeyID = d.str("key id")
	e.Signature = d.bytes("signature")
	if d.err != nil {
		return nil, d.err
	}
	if d.off != len(b) {
		return nil, fmt.Errorf("%w: %d trailing bytes", ErrMalformedLeaf, len(b)-d.off)
	}
	// The checks above are meant to make this impossible; it stays as the
	// definition of canonical.
	if !bytes.Equal(e.Leaf(), b) {
		return nil, fmt.Errorf("%w: not canonically encoded", ErrMalformedLeaf)
	}
	return e, nil
}

// decoder reads the encoding above. After the first error every method
// returns a zero value, so callers check d.err once at the end.
type decoder struct {
	buf []byte
	off int
	err error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: at byte %d: %s", ErrMalformedLeaf, d.off, fmt.Sprintf(format, args...))
	}
}

func (d *decoder) uvarint(what string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.buf[d.off:])
	if n <= 0 {
		d.fail("%s: bad varint", what)
		return 0
	}
	if n != len(binary.AppendUvarint(nil, v)) {
		d.fail("%s: non-minimal varint", what)
		return 0
	}
	d.off += n
	return v
}

// length reads a byte length and checks it fits in the remaining input.
func (d *decoder) length(what string) int {
	n := d.uvarint(what)
	if d.err == nil && n > uint64(len(d.buf)-d.off) {
		d.fail("%s: length %d exceeds remaining %d bytes", what, n, len(d.buf)-d.off)
		return 0
	}
	return int(n)
}

// count reads an element count. Every element takes at least one byte, so a
// count larger than the remaining input is rejected before allocating.
func (d *decoder) count(what string) int {
	return d.length(what + " count")
}

func (d *decoder) raw(what string) []byte {
	n := d.length(what)
	if d.err != nil {
		return nil
	}
	p := d.buf[d.off : d.off+n]
	d.off += n
	return p
}

func (d *decoder) str(what string) string { return string(d.raw(what)) }

func (d *decoder) bytes(what string) []byte {
	p := d.raw(what)
	if len(p) == 0 {
		return nil
	}
	return bytes.Clone(p)
}

func (d *decoder) fixed(width int, what string) uint64 {
	if d.err != nil {
		return 0
	}
	if len(d.buf)-d.off < width {
		d.fail("%s: truncated", what)
		return 0
	}
	p := d.buf[d.off : d.off+width]
	d.off += width
	if width == 8 {
		return binary.BigEndian.Uint64(p)
	}
	return uint64(binary.BigEndian.Uint32(p))
}
