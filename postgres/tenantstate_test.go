package postgres_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/postgres"
	"github.com/custody-mem/custody/tlog"
	"github.com/transparency-dev/merkle/compact"
)

// The writes of one batch share what the batch read of their tenant once
// it took the tenant's lock (the policy, the open pauses, the log's
// border) and change it as they change the rows; a write rolled back to
// its savepoint takes its changes with it. Each write here sees exactly
// what it would had every write before it committed alone: appends land
// at consecutive indexes with a rolled-back one in between leaving no
// gap, the tree's stored nodes give the root of the leaves kept, a policy
// set in the batch is the policy of the writes after it (a rolled-back
// one is not), and a pause added in the batch holds the writes after it.
func TestBatchKeepsTenantState(t *testing.T) {
	ctx := t.Context()
	st := openDSN(t, newDatabase(t))
	now := time.Now()
	errRolledBack := errors.New("rolled back on purpose")
	appendWant := func(leaf string, want uint64) func(custody.Tx) error {
		return func(tx custody.Tx) error {
			i, err := tx.AppendLeaf(ctx, "acme", []byte(leaf))
			if err == nil && i != want {
				err = fmt.Errorf("%s appended at %d, want %d", leaf, i, want)
			}
			return err
		}
	}
	policyWant := func(want string) func(custody.Tx) error {
		return func(tx custody.Tx) error {
			text, err := tx.Policy(ctx, "acme")
			if err == nil && string(text) != want {
				err = fmt.Errorf("policy %q, want %q", text, want)
			}
			return err
		}
	}
	pausesWant := func(want int) func(custody.Tx) error {
		return func(tx custody.Tx) error {
			ps, err := tx.OpenPauses(ctx, "acme", now)
			if err == nil && len(ps) != want {
				err = fmt.Errorf("%d open pauses, want %d", len(ps), want)
			}
			return err
		}
	}
	pause := &custody.Pause{ID: "p1", Tenant: "acme", Writer: "acme/mallory", Reason: "test", By: "acme/admin", CreatedAt: now}
	errs := st.UpdateEach(ctx,
		func(tx custody.Tx) error { // loads the state with the lock: no policy yet
			if _, err := tx.Policy(ctx, "acme"); !errors.Is(err, custody.ErrNotFound) {
				return fmt.Errorf("policy before any: %v, want not found", err)
			}
			return nil
		},
		appendWant("one", 0),
		func(tx custody.Tx) error {
			if _, err := tx.AppendLeaf(ctx, "acme", []byte("dropped")); err != nil {
				return err
			}
			if err := tx.SetPolicy(ctx, "acme", []byte("dropped policy"), "acme/admin", now); err != nil {
				return err
			}
			return errRolledBack
		},
		appendWant("two", 1),
		appendWant("three", 2),
		func(tx custody.Tx) error { return tx.SetPolicy(ctx, "acme", []byte("kept policy"), "acme/admin", now) },
		policyWant("kept policy"),
		pausesWant(0),
		func(tx custody.Tx) error { return tx.InsertPause(ctx, pause) },
		pausesWant(1),
		appendWant("four", 3),
	)
	for i, err := range errs {
		if i == 2 {
			if !errors.Is(err, errRolledBack) {
				t.Fatalf("write %d: %v, want its own error", i, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	leaves := []string{"one", "two", "three", "four"}
	checkTenantLog(t, st, "acme", leaves)

	// The next transaction reads the state again, committed.
	if err := st.Update(ctx, func(tx custody.Tx) error {
		if err := policyWant("kept policy")(tx); err != nil {
			return err
		}
		if err := pausesWant(1)(tx); err != nil {
			return err
		}
		return appendWant("five", 4)(tx)
	}); err != nil {
		t.Fatal(err)
	}
	checkTenantLog(t, st, "acme", append(leaves, "five"))
}

// checkTenantLog fails unless tenant's log holds exactly want, in order, and
// its stored nodes give the RFC 6962 root of those leaves.
func checkTenantLog(t *testing.T, st *postgres.Store, tenant string, want []string) {
	t.Helper()
	ctx := t.Context()
	got, err := st.Leaves(ctx, tenant, 0, uint64(len(want))+1)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d leaves, want %d", len(got), len(want))
	}
	mem := tlog.NewMemNodes()
	for i, l := range got {
		if string(l.Data) != want[i] {
			t.Fatalf("leaf %d is %q, want %q", i, l.Data, want[i])
		}
		nodes, _, err := tlog.Append(ctx, mem, uint64(i), tlog.LeafHash([]byte(want[i])))
		if err != nil {
			t.Fatal(err)
		}
		mem.Put(nodes)
	}
	wantRoot, err := tlog.RootHash(ctx, mem, uint64(len(want)))
	if err != nil {
		t.Fatal(err)
	}
	root, err := tlog.RootHash(ctx, storeNodes{st, tenant}, uint64(len(want)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(root, wantRoot) {
		t.Fatalf("root from the stored nodes %x, want %x", root, wantRoot)
	}
}

// storeNodes reads a tenant's stored tree nodes (tlog.NodeReader).
type storeNodes struct {
	st     *postgres.Store
	tenant string
}

func (s storeNodes) Nodes(ctx context.Context, ids []compact.NodeID) ([][]byte, error) {
	return s.st.Nodes(ctx, s.tenant, ids)
}

// A write's closing inserts (the record, its edges, its log leaf) are
// held back and sent together at its end or before its next statement.
// Held back, an insert still fails its write, and only its write: the
// second write of the batch inserts a record whose id the first took, so
// it fails, its leaf with it, while the writes around it commit. Its twin:
// a read after an insert in the same write sees the record.
func TestHeldBackInsertsFailTheirWrite(t *testing.T) {
	ctx := t.Context()
	st := openDSN(t, newDatabase(t))
	record := func(id string) *custody.Record {
		return &custody.Record{ID: id, Tenant: "acme", Owner: "alice", Namespace: "n", Key: id, Class: custody.ClassFact,
			Body: "body of " + id, Channel: custody.ChannelUser, Writer: "acme/alice", Authority: custody.AuthorityUser,
			Audience: custody.AudienceOwner, State: custody.StateAdmitted, CreatedAt: time.Now(), Version: 1, Parents: []custody.Edge{}}
	}
	write := func(id, leaf string) func(custody.Tx) error {
		return func(tx custody.Tx) error {
			if _, err := tx.AppendLeaf(ctx, "acme", []byte(leaf)); err != nil {
				return err
			}
			return tx.InsertRecord(ctx, record(id))
		}
	}
	errs := st.UpdateEach(ctx,
		write("01JA0000000000000000000001", "one"),
		write("01JA0000000000000000000001", "dropped"), // the same id
		func(tx custody.Tx) error {
			if err := write("01JA0000000000000000000002", "two")(tx); err != nil {
				return err
			}
			r, err := tx.Record(ctx, "acme", "01JA0000000000000000000002")
			if err == nil && r.Body != "body of 01JA0000000000000000000002" {
				err = fmt.Errorf("read back %q", r.Body)
			}
			return err
		},
	)
	if errs[0] != nil || errs[2] != nil {
		t.Fatalf("the writes around the failing one: %v, %v", errs[0], errs[2])
	}
	if errs[1] == nil {
		t.Fatal("a write inserting a taken record id succeeded")
	}
	checkTenantLog(t, st, "acme", []string{"one", "two"})
	for _, id := range []string{"01JA0000000000000000000001", "01JA0000000000000000000002"} {
		if err := st.View(ctx, func(tx custody.Tx) error {
			_, err := tx.Record(ctx, "acme", id)
			return err
		}); err != nil {
			t.Fatalf("record %s after the batch: %v", id, err)
		}
	}
}

// A write alone in its transaction sends its held-back inserts with the
// commit: one that fails is the write's own error (not the server's
// unavailability), nothing of the write is kept, and the next write
// commits.
func TestLoneWriteInsertFailsAlone(t *testing.T) {
	ctx := t.Context()
	st := openDSN(t, newDatabase(t))
	insert := func(leaf string) error {
		return st.Update(ctx, func(tx custody.Tx) error {
			if _, err := tx.AppendLeaf(ctx, "acme", []byte(leaf)); err != nil {
				return err
			}
			return tx.InsertRecord(ctx, &custody.Record{ID: "01JA0000000000000000000001", Tenant: "acme", Owner: "alice", Namespace: "n",
				Class: custody.ClassFact, Body: leaf, Channel: custody.ChannelUser, Writer: "acme/alice", Authority: custody.AuthorityUser,
				Audience: custody.AudienceOwner, State: custody.StateAdmitted, CreatedAt: time.Now(), Version: 1, Parents: []custody.Edge{}})
		})
	}
	if err := insert("one"); err != nil {
		t.Fatal(err)
	}
	err := insert("dropped") // the same record id
	if err == nil || errors.Is(err, custody.ErrUnavailable) {
		t.Fatalf("a lone write inserting a taken id: %v, want its own error", err)
	}
	if err := st.Update(ctx, func(tx custody.Tx) error {
		_, err := tx.AppendLeaf(ctx, "acme", []byte("two"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	checkTenantLog(t, st, "acme", []string{"one", "two"})
}

// A write's held-back statements travel with the next write's first
// statement; a next write that fails before it sends any still sends
// them, and the write they came from commits: here the second write
// fails at once, the third after a statement of its own, and the first
// and fourth are kept.
func TestCarriedStatementsLand(t *testing.T) {
	ctx := t.Context()
	st := openDSN(t, newDatabase(t))
	errOwn := errors.New("this write's own failure")
	appendLeaf := func(leaf string) func(custody.Tx) error {
		return func(tx custody.Tx) error {
			_, err := tx.AppendLeaf(ctx, "acme", []byte(leaf))
			return err
		}
	}
	errs := st.UpdateEach(ctx,
		appendLeaf("one"),
		func(custody.Tx) error { return errOwn },
		func(tx custody.Tx) error {
			if err := appendLeaf("dropped")(tx); err != nil {
				return err
			}
			if _, err := tx.LogSize(ctx, "acme"); err != nil {
				return err
			}
			return errOwn
		},
		appendLeaf("two"),
	)
	for i, want := range []error{nil, errOwn, errOwn, nil} {
		if !errors.Is(errs[i], want) && !(want == nil && errs[i] == nil) {
			t.Fatalf("write %d: %v, want %v", i, errs[i], want)
		}
	}
	checkTenantLog(t, st, "acme", []string{"one", "two"})
}
