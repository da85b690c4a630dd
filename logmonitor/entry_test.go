package logmonitor

import (
	"bytes"
	"crypto/ed25519"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// encode writes e as docs/log-format.md section 6 says, signing it with
// key (or keeping e.Signature when key is nil).
func encode(e *Entry, key ed25519.PrivateKey) []byte {
	str := func(b []byte, s string) []byte { return append(binary.AppendUvarint(b, uint64(len(s))), s...) }
	b := append([]byte(magic), 1)
	b = str(b, e.Tenant)
	b = str(b, e.RecordID)
	b = binary.AppendUvarint(b, uint64(len(e.RecordIDs)))
	for _, id := range e.RecordIDs {
		b = str(b, id)
	}
	for _, s := range []string{e.Transition, e.PrevState, e.NewState, string(e.BodyHash), e.PolicyVersion, e.Actor} {
		b = str(b, s)
	}
	b = binary.BigEndian.AppendUint64(b, uint64(e.Time.Unix()))
	b = binary.BigEndian.AppendUint32(b, uint32(e.Time.Nanosecond()))
	keys := make([]string, 0, len(e.Details))
	for k := range e.Details {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = binary.AppendUvarint(b, uint64(len(keys)))
	for _, k := range keys {
		b = str(str(b, k), e.Details[k])
	}
	b = str(b, e.KeyID)
	sig := e.Signature
	if key != nil {
		sig = ed25519.Sign(key, b)
	}
	return str(b, string(sig))
}

func testKey(seed byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize))
}

// The server's principal entry teaches the key a principal's entries are
// signed with: the principal's entry verifies, the same entry signed by
// another key or naming another actor does not, nor one by a principal no
// entry introduced; a leaf altered after signing fails.
func TestSigners(t *testing.T) {
	server, alice := testKey(1), testKey(2)
	at := time.Date(2026, 11, 30, 8, 1, 2, 345678901, time.UTC)
	principal := &Entry{Tenant: "acme", Transition: "principal", Actor: "server", Time: at, KeyID: KeyID(server.Public().(ed25519.PublicKey)),
		Details: map[string]string{"name": "alice", "roles": "user", "public_key": hex.EncodeToString(alice.Public().(ed25519.PublicKey))}}
	write := &Entry{Tenant: "acme", RecordID: "01J", Transition: "admission", NewState: "admitted", BodyHash: bytes.Repeat([]byte{7}, 32),
		PolicyVersion: "v1", Actor: "acme/alice", Time: at, KeyID: KeyID(alice.Public().(ed25519.PublicKey)), Details: map[string]string{"namespace": "n"}}
	decode := func(b []byte) *Entry {
		t.Helper()
		e, err := DecodeLeaf(b)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}

	s := NewSigners(server.Public().(ed25519.PublicKey))
	if err := s.Check(decode(encode(write, alice))); err == nil {
		t.Fatal("an entry of a principal no entry introduced verified")
	}
	p := decode(encode(principal, server))
	if err := s.Check(p); err != nil {
		t.Fatalf("the server's principal entry: %v", err)
	}
	if got := decode(encode(write, alice)); s.Check(got) != nil || got.Time != at || got.Details["namespace"] != "n" || got.Summary() != "admission by acme/alice: record 01J -→admitted (namespace=n)" {
		t.Fatalf("alice's entry: %v, %+v, %q", s.Check(got), got, got.Summary())
	}
	forged := *write
	forged.KeyID = KeyID(server.Public().(ed25519.PublicKey))
	if err := s.Check(decode(encode(&forged, server))); err == nil || !strings.Contains(err.Error(), "key id") {
		t.Fatalf("alice's entry signed by the server key: %v", err)
	}
	if err := s.Check(decode(encode(write, testKey(3)))); err == nil || !strings.Contains(err.Error(), "does not verify") {
		t.Fatalf("alice's entry signed by another key: %v", err)
	}
	leaf := encode(write, alice)
	leaf[bytes.Index(leaf, []byte("admitted"))] = 'A'
	if err := s.Check(decode(leaf)); err == nil {
		t.Fatal("an entry altered after signing verified")
	}
}

// DecodeLeaf refuses every non-canonical form the doc names, and takes
// the canonical one.
func TestDecodeLeafCanonical(t *testing.T) {
	e := &Entry{Tenant: "acme", Transition: "policy", Actor: "server", Time: time.Unix(5, 6).UTC(), KeyID: "k",
		Details: map[string]string{"a": "1", "b": "2"}, Signature: []byte("sig")}
	good := encode(e, nil)
	if _, err := DecodeLeaf(good); err != nil {
		t.Fatalf("the canonical leaf: %v", err)
	}
	swapped := bytes.Replace(good, []byte("\x01a\x011\x01b\x012"), []byte("\x01b\x012\x01a\x011"), 1)
	nanos := bytes.Clone(good)
	off := bytes.Index(good, []byte("server")) + len("server") + 8
	binary.BigEndian.PutUint32(nanos[off:], 1e9)
	long := append(append([]byte(magic), 1, 0x84, 0x00), good[len(magic)+2:]...) // tenant length 4 as two bytes
	for name, b := range map[string][]byte{
		"trailing byte":         append(bytes.Clone(good), 0),
		"truncated":             good[:len(good)-1],
		"unsorted details":      swapped,
		"nanoseconds of 10⁹":    nanos,
		"non-minimal varint":    long,
		"version 2":             append(append([]byte(magic), 2), good[len(magic)+1:]...),
		"no magic":              good[1:],
		"a length past the end": append(append([]byte(magic), 1, 0x7f), "acme"...),
	} {
		if _, err := DecodeLeaf(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v; want ErrMalformed", name, err)
		}
	}
}

// FuzzDecodeLeaf: any input decodes without panicking, and what decodes
// encodes back to the same bytes (the encoding is canonical).
func FuzzDecodeLeaf(f *testing.F) {
	at := time.Date(2026, 11, 30, 8, 1, 2, 345678901, time.UTC)
	f.Add(encode(&Entry{Tenant: "acme", RecordIDs: []string{"a", "b"}, Transition: "suspend", Actor: "server", Time: at,
		Details: map[string]string{"cause": "a", "reason": "é\x00"}, KeyID: "0011"}, testKey(1)))
	f.Add(encode(&Entry{}, nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := DecodeLeaf(b)
		if err != nil {
			return
		}
		if again := encode(e, nil); !bytes.Equal(again, b) {
			t.Fatalf("decoded %x, encodes again as %x", b, again)
		}
	})
}
