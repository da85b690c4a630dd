package tlog_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"fmt"
	"log"
	"time"

	"github.com/custody-mem/custody/tlog"
)

// A backend appends a leaf by reading the tree's border through its
// NodeReader, storing the returned nodes with the leaf, and can then serve
// inclusion proofs that anyone can check against a root.
func ExampleAppend() {
	ctx := context.Background()
	nodes := tlog.NewMemNodes() // a database table in production
	var size uint64
	var root []byte
	for _, leaf := range []string{"alpha", "beta", "gamma"} {
		newNodes, newRoot, err := tlog.Append(ctx, nodes, size, tlog.LeafHash([]byte(leaf)))
		if err != nil {
			log.Fatal(err)
		}
		nodes.Put(newNodes) // in the same transaction as the leaf itself
		size, root = size+1, newRoot
	}
	fmt.Printf("size %d root %x\n", size, root[:8])

	proof, err := tlog.InclusionProof(ctx, nodes, 1, size)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("proof hashes:", len(proof))
	err = tlog.VerifyInclusion(tlog.LeafHash([]byte("beta")), 1, size, proof, root)
	fmt.Println("beta at 1:", err == nil)
	err = tlog.VerifyInclusion(tlog.LeafHash([]byte("delta")), 1, size, proof, root)
	fmt.Println("delta at 1:", err == nil)
	// Output:
	// size 3 root 385da30f3917282c
	// proof hashes: 2
	// beta at 1: true
	// delta at 1: false
}

// Checkpoints are C2SP signed notes. The server signs one with its key; a
// client that knows the verifier key opens it and gets a size and root to
// check proofs against.
func ExampleSignCheckpoint() {
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize)) // normally ServerKey.SigningKey()
	signer, verifier, err := tlog.NewNoteSigner("custody.example.com/log", priv)
	if err != nil {
		log.Fatal(err)
	}
	c := tlog.Checkpoint{Origin: "custody.example.com/log", Size: 0, Root: tlog.EmptyRoot()}
	msg, err := tlog.SignCheckpoint(c, signer)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(string(msg))

	opened, err := tlog.OpenCheckpoint(msg, "custody.example.com/log", verifier)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("size:", opened.Size)
	// Output:
	// custody.example.com/log
	// 0
	// 47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=
	//
	// — custody.example.com/log 0IBcdCGC5N6NKCkGniFpepF2g/gDSAzEy2q0poIN5wyfBT91a2SRiZNQ7FQsXbpSQREgLKZKx296/lv+N1Ep1qkcHAA=
	// size: 0
}

// Entries are signed by the acting principal and stored as leaves.
func ExampleEntry_Sign() {
	pub, priv, err := tlog.GeneratePrincipalKey()
	if err != nil {
		log.Fatal(err)
	}
	e := &tlog.Entry{
		Tenant:     "acme",
		RecordID:   "rec_1",
		Transition: "admit",
		NewState:   "active",
		Actor:      "acme/alice",
		Time:       time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC),
		Details:    map[string]string{"audience": "team"},
	}
	e.Sign(priv)
	leaf := e.Leaf() // stored, and hashed into the tree

	back, err := tlog.ParseLeaf(leaf)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(back.Transition, back.Time.Format(time.RFC3339Nano), back.Verify(pub) == nil)
	back.NewState = "retired"
	fmt.Println("after tampering:", back.Verify(pub) == nil)
	// Output:
	// admit 2025-01-02T03:04:05.000000006Z true
	// after tampering: false
}
