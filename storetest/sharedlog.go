package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/tlog"
)

// SharedLog is the one log all tenants shared before one log per tenant,
// as a store written then would hold the tenants' logs of st: their leaves
// interleaved one from each tenant in turn. Tests of the migration rewind a
// store to it (each backend with its own SQL) and check that the migration
// re-sequences it into the tenants' logs again, with the old log still
// verifiable.
type SharedLog struct {
	Leaves []SharedLeaf // in the shared log's order
	index  map[string][]uint64
}

// SharedLeaf is one leaf of the shared log: its index there, and its
// tenant and index in that tenant's log.
type SharedLeaf struct {
	Index       uint64
	Tenant      string
	TenantIndex uint64
	Data        []byte
}

// SharedLogOf interleaves the tenants' logs of st.
func SharedLogOf(tb testing.TB, st custody.Store) *SharedLog {
	tb.Helper()
	ctx := context.Background()
	tenants, err := st.LogTenants(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	logs := map[string][]custody.Leaf{}
	for _, t := range tenants {
		n, err := st.LogSize(ctx, t)
		if err != nil {
			tb.Fatal(err)
		}
		if logs[t], err = st.Leaves(ctx, t, 0, n); err != nil {
			tb.Fatal(err)
		}
	}
	s := &SharedLog{index: map[string][]uint64{}}
	for i := 0; ; i++ {
		added := false
		for _, t := range tenants {
			if i < len(logs[t]) {
				l := logs[t][i]
				s.index[t] = append(s.index[t], uint64(len(s.Leaves)))
				s.Leaves = append(s.Leaves, SharedLeaf{Index: uint64(len(s.Leaves)), Tenant: t, TenantIndex: l.Index, Data: l.Data})
				added = true
			}
		}
		if !added {
			return s
		}
	}
}

// Index is the shared log's index of leaf i of tenant's log.
func (s *SharedLog) Index(tenant string, i uint64) uint64 { return s.index[tenant][i] }

// Receipt is a record's receipt (JSON) with the log index it names moved
// from the tenant's log to the shared one, as a store written before one
// log per tenant holds it.
func (s *SharedLog) Receipt(tb testing.TB, tenant, receipt string) string {
	tb.Helper()
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(receipt), &fields); err != nil || fields["log_index"] == nil {
		return receipt
	}
	var i uint64
	if err := json.Unmarshal(fields["log_index"], &i); err != nil {
		tb.Fatal(err)
	}
	fields["log_index"] = json.RawMessage(fmt.Sprint(s.Index(tenant, i)))
	b, err := json.Marshal(fields)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// Checkpoint signs a checkpoint of the shared log's first size leaves
// with key under origin, as a server did before one log per tenant.
func (s *SharedLog) Checkpoint(tb testing.TB, key *tlog.ServerKey, origin string, size int) []byte {
	tb.Helper()
	hashes := make([][]byte, size)
	for i := range hashes {
		hashes[i] = tlog.LeafHash(s.Leaves[i].Data)
	}
	_, root, err := tlog.AppendMany(context.Background(), tlog.NewMemNodes(), 0, hashes)
	if err != nil {
		tb.Fatal(err)
	}
	signer, _, err := tlog.NewNoteSigner(origin, key.SigningKey())
	if err != nil {
		tb.Fatal(err)
	}
	msg, err := tlog.SignCheckpoint(tlog.Checkpoint{Origin: origin, Size: uint64(size), Root: root}, signer)
	if err != nil {
		tb.Fatal(err)
	}
	return msg
}

// CheckMigrated checks a store migrated from the shared log s: each
// tenant's log holds its leaves again, verify passes with the shared log's
// checkpoint old (signed before the migration) and finds the old log
// rebuilt, and a write after the migration verifies too.
func CheckMigrated(tb testing.TB, svc *custody.Service, s *SharedLog, old []byte, write func()) {
	tb.Helper()
	ctx := context.Background()
	st := svc.Store()
	for _, l := range s.Leaves {
		got, err := st.Leaves(ctx, l.Tenant, l.TenantIndex, l.TenantIndex+1)
		if err != nil || len(got) != 1 || string(got[0].Data) != string(l.Data) {
			tb.Fatalf("leaf %d of the shared log is not leaf %d of %s's log after the migration (%v)", l.Index, l.TenantIndex, l.Tenant, err)
		}
	}
	rep, err := svc.Verify(ctx, custody.VerifyOptions{Checkpoints: [][]byte{old}})
	if err != nil {
		tb.Fatalf("verify after the migration, with the shared log's checkpoint: %v", err)
	}
	if rep.Legacy != uint64(len(s.Leaves)) || rep.Entries != uint64(len(s.Leaves)) || rep.Checkpoints != 2 {
		tb.Fatalf("verify after the migration: %+v; want the shared log of %d entries rebuilt and its 2 checkpoints checked", rep, len(s.Leaves))
	}
	p, err := svc.CheckPublished(ctx)
	if err != nil {
		tb.Fatalf("the checkpoint file of the shared log after the migration: %v", err)
	}
	if _, err := svc.CheckpointAll(ctx); err != nil {
		tb.Fatal(err)
	}
	write()
	if _, err := svc.CheckpointAll(ctx); err != nil {
		tb.Fatal(err)
	}
	if _, err := svc.Verify(ctx, custody.VerifyOptions{Checkpoints: [][]byte{old}}); err != nil {
		tb.Fatalf("verify after a write after the migration: %v", err)
	}
	if _, err := svc.CheckPublished(ctx); err != nil {
		tb.Fatalf("the checkpoint file after the migration and a write (%+v): %v", p, err)
	}
}

// ServiceAfterMigration is a service with key over st, a store just
// migrated, whose log name is resolved as custody serve resolves it (a new
// unique one) and whose checkpoint file is file.
func ServiceAfterMigration(tb testing.TB, st custody.Store, key *tlog.ServerKey, clock *Clock, file string) *custody.Service {
	tb.Helper()
	name, err := custody.ResolveLogName(context.Background(), st, "")
	if err != nil || !name.Generated {
		tb.Fatalf("the log name of a migrated store: %+v, %v; want a new one made", name, err)
	}
	pol, err := custody.ParsePolicy(policyText)
	if err != nil {
		tb.Fatal(err)
	}
	svc, err := custody.New(st, key, custody.Options{Now: clock.Now, Policy: pol, LogOrigin: name.Name, CheckpointFile: file})
	if err != nil {
		tb.Fatal(err)
	}
	return svc
}
