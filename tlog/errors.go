package tlog

import "errors"

// Sentinel errors. Functions wrap them with %w and add context, so test with
// errors.Is.
var (
	// ErrMissingNode means a NodeReader could not supply a node hash that the
	// tree of the requested size must contain: the tree is smaller than the
	// caller believes, or the node table is damaged.
	ErrMissingNode = errors.New("tlog: missing tree node")

	// ErrOutOfRange means a proof was requested or checked for indexes or
	// sizes that do not make sense (index >= size, from > to). It is a caller
	// error: HTTP handlers map it to 400.
	ErrOutOfRange = errors.New("tlog: index or size out of range")

	// ErrBadHash means a hash had the wrong length.
	ErrBadHash = errors.New("tlog: malformed hash")

	// ErrInvalidProof means a proof did not verify against the given roots.
	ErrInvalidProof = errors.New("tlog: invalid proof")

	// ErrMalformedLeaf means bytes are not a canonical entry encoding.
	ErrMalformedLeaf = errors.New("tlog: malformed leaf")

	// ErrBadSignature means an entry signature does not verify under the
	// given public key (or was made by a different key).
	ErrBadSignature = errors.New("tlog: bad entry signature")

	// ErrBadCheckpoint means a signed checkpoint failed signature
	// verification or is not a well-formed checkpoint for the expected origin.
	ErrBadCheckpoint = errors.New("tlog: bad checkpoint")

	// ErrSealBroken means sealed data could not be opened: it was tampered
	// with, truncated, sealed under another server key, or bound to other
	// additional data.
	ErrSealBroken = errors.New("tlog: sealed data cannot be opened")

	// ErrBadKeyFile means the server key file exists but cannot be used.
	ErrBadKeyFile = errors.New("tlog: unusable server key file")
)
