package tlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
)

// Proofs are built by merkle/proof, which says which stored (perfect
// subtree) nodes a proof needs and how to fold the ones under the single
// ephemeral node, if any, into its hash. We fetch all of them with one Nodes
// call and let proof.Nodes.Rehash do the folding. The result is the RFC 6962
// / RFC 9162 audit path, verifiable by any compliant verifier.

// InclusionProof returns the inclusion proof of the leaf at index in the tree
// of the given size, from leaf to root. It reads at most about 2*log2(size)
// nodes in one Nodes call. It returns [ErrOutOfRange] unless index < size.
func InclusionProof(ctx context.Context, r NodeReader, index, size uint64) ([][]byte, error) {
	if index >= size {
		return nil, fmt.Errorf("%w: inclusion of leaf %d in tree size %d", ErrOutOfRange, index, size)
	}
	pn, err := proof.Inclusion(index, size)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOutOfRange, err)
	}
	return fetchProof(ctx, r, pn, "inclusion", index, size)
}

// ConsistencyProof returns the proof that the tree of size from is a prefix
// of the tree of size to. It is empty when from == 0 or from == to. It
// returns [ErrOutOfRange] if from > to.
func ConsistencyProof(ctx context.Context, r NodeReader, from, to uint64) ([][]byte, error) {
	if from > to {
		return nil, fmt.Errorf("%w: consistency from size %d to smaller size %d", ErrOutOfRange, from, to)
	}
	pn, err := proof.Consistency(from, to)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOutOfRange, err)
	}
	return fetchProof(ctx, r, pn, "consistency", from, to)
}

func fetchProof(ctx context.Context, r NodeReader, pn proof.Nodes, kind string, a, b uint64) ([][]byte, error) {
	hashes, err := readNodes(ctx, r, pn.IDs)
	if err != nil {
		return nil, fmt.Errorf("tlog: %s proof (%d, %d): %w", kind, a, b, err)
	}
	p, err := pn.Rehash(hashes, hashChildren)
	if err != nil {
		return nil, fmt.Errorf("tlog: %s proof (%d, %d): %w", kind, a, b, err)
	}
	return p, nil
}

// VerifyInclusion checks that leafHash is the leaf at index in the tree of
// the given size with the given root. It wraps proof.VerifyInclusion; a
// mismatch wraps [ErrInvalidProof], index >= size wraps [ErrOutOfRange].
func VerifyInclusion(leafHash []byte, index, size uint64, p [][]byte, root []byte) error {
	if index >= size {
		return fmt.Errorf("%w: inclusion of leaf %d in tree size %d", ErrOutOfRange, index, size)
	}
	if err := proof.VerifyInclusion(rfc6962.DefaultHasher, index, size, leafHash, p, root); err != nil {
		return proofError(err, fmt.Sprintf("inclusion of leaf %d in tree size %d", index, size))
	}
	return nil
}

// VerifyConsistency checks that the tree of size from with root root1 is a
// prefix of the tree of size to with root root2. It wraps
// proof.VerifyConsistency and is stricter in one case: for from == 0,
// root1 must be [EmptyRoot] (the library accepts any root1 there). A
// mismatch wraps [ErrInvalidProof], from > to wraps [ErrOutOfRange].
func VerifyConsistency(from, to uint64, p [][]byte, root1, root2 []byte) error {
	if from > to {
		return fmt.Errorf("%w: consistency from size %d to smaller size %d", ErrOutOfRange, from, to)
	}
	if from == 0 && !bytes.Equal(root1, EmptyRoot()) {
		return fmt.Errorf("%w: root of tree size 0 is not the empty root", ErrInvalidProof)
	}
	if err := proof.VerifyConsistency(rfc6962.DefaultHasher, from, to, p, root1, root2); err != nil {
		return proofError(err, fmt.Sprintf("consistency from size %d to %d", from, to))
	}
	return nil
}

// proofError wraps a merkle/proof verification error in ErrInvalidProof.
// The library's RootMismatchError prints hashes as decimal byte lists; it is
// replaced by a hex rendering.
func proofError(err error, what string) error {
	if rm, ok := errors.AsType[proof.RootMismatchError](err); ok {
		return fmt.Errorf("%w: %s: calculated root %x, expected %x", ErrInvalidProof, what, rm.CalculatedRoot, rm.ExpectedRoot)
	}
	return fmt.Errorf("%w: %s: %w", ErrInvalidProof, what, err)
}
