package storetest

import (
	"context"
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/tiles"
	"github.com/custody-mem/custody/tlog"
	sumdb "golang.org/x/mod/sumdb/tlog"
)

// testOversizeLeaf is a store that holds a leaf longer than an entry
// bundle can: a retirement with a 70 KB reason, as a server wrote it
// before reasons and leaves were bounded (it is appended here as that
// server did, signed with the server key, with the record's receipt to
// match). Verify passes, since the store and its log agree, and names the
// entry in its report (LogReport.Oversize), which custody verify prints
// as a warning; the hash tiles and the proofs cover it; the entry bundle
// that holds it is an error, and a bundle without it is served.
func testOversizeLeaf(t *testing.T, e *env) {
	key, _, err := tlog.LoadOrCreateServerKey(filepath.Join(t.TempDir(), "server.key"))
	if err != nil {
		t.Fatal(err)
	}
	pol, err := custody.ParsePolicy(policyText)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := custody.New(e.store, key, custody.Options{Now: e.clock.Now, Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := svc.AddPrincipal(e.ctx, custody.PrincipalInput{Tenant: "acme", Name: "alice", Roles: []string{"user"}})
	if err != nil {
		t.Fatal(err)
	}
	alice := &custody.Caller{Principal: p, Subject: p}
	d, err := svc.Remember(e.ctx, alice, custody.Candidate{Namespace: "n", Class: custody.ClassFact, Body: "an old address", Channel: "user"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Forget(e.ctx, alice, d.ID, "moved", false); err != nil {
		t.Fatal(err)
	}
	big := AppendOversizeRetirement(t, e.store, key, "acme", d.ID)
	// Writes after it: the log goes on.
	for i := range 3 {
		if _, err := svc.Remember(e.ctx, alice, custody.Candidate{Namespace: "n", Class: custody.ClassEpisode, Body: "later " + string(rune('a'+i)), Channel: "user"}); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := svc.Verify(e.ctx, custody.VerifyOptions{})
	if err != nil {
		t.Fatalf("verify of a store with an oversize entry: %v; want it to pass (the store and its log agree)", err)
	}
	if len(rep.Logs) != 1 || len(rep.Logs[0].Oversize) != 1 || rep.Logs[0].Oversize[0] != big {
		t.Fatalf("verify's report: %+v; want entry %d named as oversize", rep.Logs, big)
	}
	size := rep.Logs[0].Entries
	logs := svc.TreeLogs()
	if _, err := tiles.Read(e.ctx, logs, "acme", sumdb.Tile{H: tiles.Height, L: 0, N: 0, W: int(size)}); err != nil {
		t.Errorf("the hash tile over the oversize entry: %v; want it served", err)
	}
	_, err = tiles.Read(e.ctx, logs, "acme", sumdb.Tile{H: tiles.Height, L: -1, N: 0, W: int(size)})
	if err == nil || !strings.Contains(err.Error(), "more than an entry bundle can hold") {
		t.Errorf("the entry bundle holding it: %v; want an error saying the entry does not fit", err)
	}
	if _, err := tiles.Read(e.ctx, logs, "acme", sumdb.Tile{H: tiles.Height, L: -1, N: 0, W: int(big)}); err != nil {
		t.Errorf("the partial entry bundle before it: %v; want it served", err)
	}
	if _, err := svc.Checkpoint(e.ctx, "acme"); err != nil {
		t.Errorf("signing a checkpoint over the oversize entry: %v", err)
	}
	if _, err := svc.InclusionProof(e.ctx, "acme", big, size); err != nil {
		t.Errorf("an inclusion proof of the oversize entry: %v", err)
	}
}

// AppendOversizeRetirement appends to tenant's log, as a server did before
// reasons and leaves were bounded, a retirement of the retired record id
// by the server with a 70 KB reason, and sets the record's receipt to
// match, so that the store verifies; it returns the entry's index. key is
// the store's server key.
func AppendOversizeRetirement(t testing.TB, st custody.Store, key *tlog.ServerKey, tenant, id string) uint64 {
	t.Helper()
	ctx := context.Background()
	reason := strings.Repeat("moved out ", 7<<10)
	var big uint64
	err := st.Update(ctx, func(tx custody.Tx) error {
		r, err := tx.Record(ctx, tenant, id)
		if err != nil {
			return err
		}
		ls, err := tx.Leaves(ctx, tenant, r.LogIndex, r.LogIndex+1)
		if err != nil {
			return err
		}
		old, err := tlog.ParseLeaf(ls[0].Data)
		if err != nil {
			return err
		}
		ent := *old
		ent.Details = maps.Clone(old.Details)
		ent.Details["reason"] = reason
		ent.Actor, ent.Time = custody.ServerActor, old.Time.Add(time.Second)
		leaf := ent.SignLeaf(key.SigningKey())
		if len(leaf) <= custody.MaxLeafBytes {
			t.Fatalf("the crafted leaf is %d bytes, not over the limit", len(leaf))
		}
		if big, err = tx.AppendLeaf(ctx, tenant, leaf); err != nil {
			return err
		}
		r.LogIndex = big
		r.Receipt.Reason, r.Receipt.Actor, r.Receipt.Time, r.Receipt.LogIndex = reason, custody.ServerActor, ent.Time, big
		return tx.UpdateRecord(ctx, r)
	})
	if err != nil {
		t.Fatal(err)
	}
	return big
}
