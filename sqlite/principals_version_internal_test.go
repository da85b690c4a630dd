package sqlite

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
)

// TestVersionReadsShared: requests that come while a read of the
// principals version is under way share the next read, which begins after
// all of them and so sees a change committed before they began; the read
// under way, which began before the change, answers none of them.
func TestVersionReadsShared(t *testing.T) {
	ctx := t.Context()
	st, err := Open(ctx, filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	bump := func() {
		t.Helper()
		if err := st.Update(ctx, func(tx custody.Tx) error {
			return tx.(*txn).exec(ctx, `UPDATE principals_version SET n = n + 1 WHERE id = 0`)
		}); err != nil {
			t.Fatal(err)
		}
	}
	v0, err := st.PrincipalsVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The reader's one connection, held: the first read waits for it.
	conn, err := st.pv.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	first := make(chan int64, 1)
	go func() {
		n, err := st.PrincipalsVersion(ctx)
		if err != nil {
			t.Error(err)
		}
		first <- n
	}()
	waitFor(t, st.pv, "the first read under way", func() bool { return st.pv.cur != nil })
	bump() // committed before the requests below begin
	const n = 32
	got := make([]int64, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			var err error
			if got[i], err = st.PrincipalsVersion(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	waitFor(t, st.pv, "every request joined the next read", func() bool { return st.pv.next != nil && st.pv.next.readers == n })
	queries := st.pv.queries.Load()
	conn.Close()
	wg.Wait()
	<-first
	for i, g := range got {
		if g != v0+1 {
			t.Fatalf("request %d read version %d, want %d: a change committed before it began", i, g, v0+1)
		}
	}
	if d := st.pv.queries.Load() - queries; d != 1 {
		t.Fatalf("%d requests made %d reads besides the one under way, want 1", n, d)
	}
	// The twin: alone, a request reads on its own and sees the newest.
	bump()
	if g, err := st.PrincipalsVersion(ctx); err != nil || g != v0+2 {
		t.Fatalf("a lone request read %d (%v), want %d", g, err, v0+2)
	}
	// A request whose context ends while it waits gets its context's error;
	// the read it joined still answers the others.
	conn, err = st.pv.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	go st.PrincipalsVersion(ctx)
	waitFor(t, st.pv, "a read under way", func() bool { return st.pv.cur != nil })
	lead := make(chan int64, 1)
	go func() {
		n, err := st.PrincipalsVersion(ctx)
		if err != nil {
			t.Error(err)
		}
		lead <- n
	}()
	waitFor(t, st.pv, "the next read's leader", func() bool { return st.pv.next != nil && st.pv.next.readers == 1 })
	cctx, cancel := context.WithCancel(ctx)
	gave := make(chan error, 1)
	go func() {
		_, err := st.PrincipalsVersion(cctx)
		gave <- err
	}()
	waitFor(t, st.pv, "a follower", func() bool { return st.pv.next != nil && st.pv.next.readers == 2 })
	cancel()
	if err := <-gave; err != context.Canceled {
		t.Fatalf("a cancelled request got %v, want context.Canceled", err)
	}
	conn.Close()
	if g := <-lead; g != v0+2 {
		t.Fatalf("the leader read %d, want %d", g, v0+2)
	}
}

// waitFor polls cond, under the version reader's lock, until it holds.
func waitFor(t *testing.T, v *versionReader, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		v.mu.Lock()
		ok := cond()
		v.mu.Unlock()
		if ok {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("waited 10 s for %s", what)
}
