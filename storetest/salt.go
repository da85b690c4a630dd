package storetest

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"fmt"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/tlog"
)

// Every record gets a fresh salt of its own where it is made (a write, a
// rebuild's new version), the store keeps it, an erasure removes it with
// the body, and verify passes throughout.
func testSalts(t *testing.T, e *env) {
	alice := e.user("acme", "alice")
	rev := e.act(e.principal("acme", "rev", []string{"reviewer"}, nil, nil), "")
	one := e.fact(alice, "n", "1234").ID
	two := e.fact(alice, "n", "1234").ID
	parent := e.fact(alice, "n", "parent")
	child := e.remember(alice, custody.Candidate{Namespace: "n", Class: custody.ClassEpisode, Body: "from the parent", Channel: "user",
		DerivedFrom: []custody.Edge{{ID: parent.ID, Weight: 1}}})
	s1, s2 := e.record("acme", one).Salt, e.record("acme", two).Salt
	if len(s1) != custody.SaltSize || len(s2) != custody.SaltSize || bytes.Equal(s1, s2) {
		t.Fatalf("two records' salts: %x and %x; want two different %d-byte salts", s1, s2, custody.SaltSize)
	}
	e.verify()

	if _, err := e.svc.Quarantine(e.ctx, rev, parent.ID, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Approve(e.ctx, rev, parent.ID); err != nil {
		t.Fatal(err)
	}
	ids, err := e.svc.Rebuild(e.ctx, rev, child.ID, "rebuilt from the parent")
	if err != nil || len(ids) != 1 {
		t.Fatalf("rebuild with a new body = %v, %v", ids, err)
	}
	if s := e.record("acme", ids[0]).Salt; len(s) != custody.SaltSize || bytes.Equal(s, e.record("acme", child.ID).Salt) {
		t.Errorf("the rebuilt version's salt %x: want a fresh one", s)
	}
	if s := e.record("acme", parent.ID).Salt; len(s) != custody.SaltSize {
		t.Errorf("a record's salt after quarantine and approval: %x", s)
	}
	e.verify()

	if _, err := e.svc.Retire(e.ctx, rev, one, "", true); err != nil {
		t.Fatal(err)
	}
	if r := e.record("acme", one); r.Body != "" || r.Salt != nil || !r.Erased {
		t.Errorf("erased record keeps body %q, salt %x", r.Body, r.Salt)
	}
	if s := e.record("acme", two).Salt; !bytes.Equal(s, s2) {
		t.Errorf("erasing one record changed another's salt")
	}
	e.verify()
}

// CopyUnsalted copies every principal, log leaf and record of from, a
// store opened with key, into the empty store to, as custody wrote them
// before salts (SQLite schema 8, PostgreSQL migration 2): no record has a
// salt, and every record entry of a record that still holds its body
// commits to it by plain SHA-256, signed again by its actor. Tests of
// upgrades use it to make a store that verify must still accept.
func CopyUnsalted(tb testing.TB, key *tlog.ServerKey, from, to custody.Store) {
	tb.Helper()
	ctx := context.Background()
	var ps []*custody.Principal
	tokens, sealed := map[string][]byte{}, map[string][]byte{}
	bodies := map[string]string{}
	var recs []*custody.Record
	err := from.View(ctx, func(tx custody.Tx) error {
		var err error
		if ps, err = tx.Principals(ctx, ""); err != nil {
			return err
		}
		for _, p := range ps {
			if tokens[p.ID()], err = tx.TokenHash(ctx, p.Tenant, p.Name); err != nil {
				return err
			}
			if sealed[p.ID()], err = tx.SealedKey(ctx, p.Tenant, p.Name); err != nil {
				return err
			}
		}
		return tx.ScanRecords(ctx, "", func(r *custody.Record) error {
			if !r.Erased {
				bodies[r.Tenant+"\x00"+r.ID] = r.Body
			}
			r.Salt = nil
			recs = append(recs, r)
			return nil
		})
	})
	if err != nil {
		tb.Fatalf("reading the store to copy: %v", err)
	}
	keys := map[string]ed25519.PrivateKey{custody.ServerActor: key.SigningKey()}
	for id, s := range sealed {
		raw, err := key.Open(s, []byte(id))
		if err != nil {
			tb.Fatalf("unsealing the key of %s: %v", id, err)
		}
		keys[id] = ed25519.PrivateKey(raw)
	}
	tenants, err := from.LogTenants(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	var leaves []custody.Leaf
	for _, t := range tenants {
		size, err := from.LogSize(ctx, t)
		if err != nil {
			tb.Fatal(err)
		}
		ls, err := from.Leaves(ctx, t, 0, size)
		if err != nil {
			tb.Fatal(err)
		}
		leaves = append(leaves, ls...)
	}
	err = to.Update(ctx, func(tx custody.Tx) error {
		for _, p := range ps {
			if err := tx.InsertPrincipal(ctx, p, tokens[p.ID()], sealed[p.ID()]); err != nil {
				return err
			}
		}
		for _, l := range leaves {
			data := l.Data
			e, err := tlog.ParseLeaf(data)
			if err != nil {
				return err
			}
			if body, ok := bodies[e.Tenant+"\x00"+e.RecordID]; ok && e.RecordID != "" && len(e.BodyHash) > 0 {
				h := sha256.Sum256([]byte(body))
				e.BodyHash = h[:]
				e.Sign(keys[e.Actor])
				data = e.Leaf()
			}
			if idx, err := tx.AppendLeaf(ctx, l.Tenant, data); err != nil {
				return err
			} else if idx != l.Index {
				return fmt.Errorf("leaf %d was appended at %d: the store to copy into is not empty", l.Index, idx)
			}
		}
		for _, r := range recs {
			if err := tx.InsertRecord(ctx, r); err != nil {
				return err
			}
			if r.State.Terminal() {
				if err := tx.Tombstone(ctx, r.Tenant, r.ID, r.State); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("writing the unsalted copy: %v", err)
	}
}
