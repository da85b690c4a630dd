package custody_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/tlog"
)

// A snapshot carries each record's salt beside its body, so the restored
// record commits to its body exactly as the exported one did and
// verifies; an erased record comes back with neither; a record of a
// snapshot that carries no salt (written before salts) gets a fresh one.
func TestRestoreCarriesSalts(t *testing.T) {
	e := newEnv(t, custody.Options{})
	alice := e.act(e.principal("acme", "alice", []string{"user"}, nil, nil), "")
	rev := e.act(e.principal("acme", "rev", []string{"reviewer"}, nil, nil), "")
	remember := func(body string) *custody.Record {
		d, err := e.svc.Remember(e.ctx, alice, custody.Candidate{Namespace: "n", Class: custody.ClassFact, Body: body, Channel: "user"})
		if err != nil {
			t.Fatal(err)
		}
		return d.Record
	}
	kept, erased := remember("1234"), remember("forget me")
	if _, err := e.svc.Retire(e.ctx, rev, erased.ID, "", true); err != nil {
		t.Fatal(err)
	}
	var snap bytes.Buffer
	if _, err := e.svc.Export(e.ctx, "acme", &snap); err != nil {
		t.Fatal(err)
	}

	restore := func(data []byte) (custody.Store, *custody.Service) {
		st, err := sqlite.Open(e.ctx, filepath.Join(t.TempDir(), "c.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		svc, err := custody.New(st, e.svc.ServerKey(), custody.Options{Now: func() time.Time { return e.now }})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Restore(e.ctx, data, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Verify(e.ctx, custody.VerifyOptions{}); err != nil {
			t.Fatalf("verify after restore: %v", err)
		}
		return st, svc
	}
	st, _ := restore(snap.Bytes())
	got := stored(t, st, kept.ID)
	if !bytes.Equal(got.Salt, kept.Salt) || len(got.Salt) != custody.SaltSize {
		t.Errorf("restored salt %x, exported %x", got.Salt, kept.Salt)
	}
	if a, b := bodyHashAt(t, e.store, kept.LogIndex), bodyHashAt(t, st, got.LogIndex); !bytes.Equal(a, b) {
		t.Errorf("the restored record's entry commits to %x, the exported one's to %x", b, a)
	}
	if g := stored(t, st, erased.ID); g.Body != "" || g.Salt != nil || !g.Erased {
		t.Errorf("the erased record came back with body %q and salt %x", g.Body, g.Salt)
	}

	// The same snapshot as an older custody wrote it: no salts.
	var ss struct {
		Snapshot  json.RawMessage `json:"snapshot"`
		Signature []byte          `json:"signature"`
	}
	if err := json.Unmarshal(snap.Bytes(), &ss); err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal(ss.Snapshot, &body); err != nil || body["salts"] == nil {
		t.Fatalf("the snapshot carries no salts (%v)", err)
	}
	delete(body, "salts")
	ss.Snapshot, _ = json.Marshal(body)
	ss.Signature = ed25519.Sign(e.svc.ServerKey().SigningKey(), ss.Snapshot)
	unsalted, _ := json.Marshal(ss)
	st, _ = restore(unsalted)
	if s := stored(t, st, kept.ID).Salt; len(s) != custody.SaltSize || bytes.Equal(s, kept.Salt) {
		t.Errorf("a record restored without a salt has salt %x; want a fresh one", s)
	}
}

func stored(t *testing.T, st custody.Store, id string) *custody.Record {
	t.Helper()
	var r *custody.Record
	err := st.View(t.Context(), func(tx custody.Tx) error {
		var err error
		r, err = tx.Record(t.Context(), "acme", id)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func bodyHashAt(t *testing.T, st custody.Store, index uint64) []byte {
	t.Helper()
	ls, err := st.Leaves(t.Context(), "acme", index, index+1)
	if err != nil || len(ls) != 1 {
		t.Fatalf("leaf %d: %v", index, err)
	}
	en, err := tlog.ParseLeaf(ls[0].Data)
	if err != nil {
		t.Fatal(err)
	}
	return en.BodyHash
}
