package tlog

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"
)

// Entry is one log entry: a state transition of the store.
//
// The zero value is a valid (if meaningless) entry. Entries are plain values;
// nothing here checks that Transition or the states are known words, that is
// the store's job. What this package guarantees is that [Entry.Leaf] and
// [ParseLeaf] are exact inverses, so whatever the store wrote can be read
// back and re-hashed bit for bit.
type Entry struct {
	Tenant        string            `json:"tenant"`               // tenant name ("" for server-wide entries)
	RecordID      string            `json:"record_id"`            // affected record id, may be ""
	RecordIDs     []string          `json:"record_ids,omitempty"` // for batch transitions (e.g. a cascade suspension); may be nil
	Transition    string            `json:"transition"`           // "admit", "quarantine", "confirm", "retire", "policy", ...
	PrevState     string            `json:"prev_state"`           // state before the transition, may be ""
	NewState      string            `json:"new_state"`            // state after the transition, may be ""
	BodyHash      []byte            `json:"body_hash"`            // commitment to the record body, never the body itself (see the encoding notes)
	PolicyVersion string            `json:"policy_version"`       // policy version in force when the transition was decided
	Actor         string            `json:"actor"`                // acting principal, e.g. "acme/alice" or "server"
	Time          time.Time         `json:"time"`                 // instant of the transition; encoded with nanosecond precision, parsed back as UTC
	Details       map[string]string `json:"details"`              // extra decoded fields; encoded sorted by key
	KeyID         string            `json:"key_id"`               // identifies the signing key, see KeyID
	Signature     []byte            `json:"signature"`            // Ed25519 signature over SignedBytes
}

// KeyID returns the identifier recorded in [Entry.KeyID] for a public key: the
// lowercase hex of the first 8 bytes of SHA-256(pub), 16 characters.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

// Sign sets e.KeyID to the id of priv's public key and e.Signature to an
// Ed25519 signature over e.SignedBytes(). Any previous signature is replaced.
//
// Sign panics if priv is not a valid Ed25519 private key (as
// [ed25519.Sign] does); keys come from [GeneratePrincipalKey] or
// [ServerKey.SigningKey].
func (e *Entry) Sign(priv ed25519.PrivateKey) {
	e.SignLeaf(priv)
}

// Verify checks that e carries a valid signature by pub: the recorded KeyID
// must be pub's id and the signature must verify over e.SignedBytes(). Every
// failure wraps [ErrBadSignature].
func (e *Entry) Verify(pub ed25519.PublicKey) error {
	if len(pub) != ed25519.PublicKeySize {
		return fmt.Errorf("%w: public key is %d bytes, want %d", ErrBadSignature, len(pub), ed25519.PublicKeySize)
	}
	if id := KeyID(pub); e.KeyID != id {
		return fmt.Errorf("%w: entry names key %q, verifying with key %q", ErrBadSignature, e.KeyID, id)
	}
	if len(e.Signature) != ed25519.SignatureSize {
		return fmt.Errorf("%w: signature is %d bytes, want %d", ErrBadSignature, len(e.Signature), ed25519.SignatureSize)
	}
	if !ed25519.Verify(pub, e.SignedBytes(), e.Signature) {
		return fmt.Errorf("%w: signature does not match entry content (key %s)", ErrBadSignature, e.KeyID)
	}
	return nil
}
