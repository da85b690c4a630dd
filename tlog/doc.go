// Package tlog is custody's tamper-evident transparency log.
//
// Every state change of the store (a record admitted, quarantined, retired,
// a policy or principal change, a restore...) is recorded as an [Entry]. An
// entry is signed by the acting principal's Ed25519 key (or the server's key
// for server-initiated transitions) and appended as one leaf of an append-only
// RFC 6962 Merkle tree. The server periodically signs a [Checkpoint] (tree
// size and root hash, in the C2SP signed-note format) so that clients and
// auditors can later check, with [VerifyInclusion] and [VerifyConsistency],
// that an entry is in the log and that the log was only ever appended to.
//
// # Layers
//
//   - Entries (entry.go, encoding.go): [Entry.Leaf] is the exact byte string
//     hashed into the tree; [ParseLeaf] is its strict inverse. The encoding is
//     canonical, so a leaf can be re-derived from a parsed entry byte for byte.
//   - Tree storage (tree.go): the tree is stored as its perfect-subtree node
//     hashes, keyed by compact.NodeID. Level 0 holds the leaf hashes. A
//     backend implements [NodeReader]; [Append] and [AppendMany] return the new
//     nodes to persist in the same transaction as the leaf.
//   - Proofs (proof.go): [InclusionProof] and [ConsistencyProof] read O(log n)
//     stored nodes in a single [NodeReader.Nodes] call.
//   - Checkpoints (checkpoint.go): [SignCheckpoint] and [OpenCheckpoint].
//   - Keys (keys.go): the [ServerKey] file holds the sealing key for secrets at
//     rest and the server's own signing key.
//   - Offline verification (verify.go): [Rebuild] recomputes the whole tree from
//     the leaves, which is what `custody verify` compares against the database.
//
// Hashing, proof construction and proof verification are delegated to
// github.com/transparency-dev/merkle; note signing to golang.org/x/mod/sumdb/note.
// This package only decides which nodes to read and store.
package tlog
