package storetest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	custody "github.com/custody-mem/custody"
)

// Verify beside writers: each run reads the store in one snapshot, so the
// records, principals and log entries committed while it runs are neither
// "in the store but not in the log" nor anything else it reports (no false
// report in any run); and a body rewritten in the store while the writers
// run is still found.
func testLiveVerify(t *testing.T, e *env) {
	const (
		writers    = 3
		maxWrites  = 2000 // each writer's bound, should the runs end late
		overlaps   = 4    // verify runs that must see writes commit beside them
		principals = 200
	)
	alice := e.user("acme", "alice")
	bob := e.user("acme", "bob")
	seed := e.fact(alice, "live", "the seed record")

	stop := make(chan struct{})
	var wrote atomic.Int64
	wroteOne := make(chan struct{}, 1) // a write committed since the last receive
	var wg sync.WaitGroup
	errs := make(chan error, writers+1)
	write := func(n int, fn func(i int) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n {
				select {
				case <-stop:
					return
				default:
				}
				if err := fn(i); err != nil {
					errs <- err
					return
				}
				wrote.Add(1)
				select {
				case wroteOne <- struct{}{}:
				default:
				}
			}
		}()
	}
	for w := range writers {
		c := []*custody.Caller{alice, bob}[w%2]
		write(maxWrites, func(i int) error {
			_, err := e.svc.Remember(e.ctx, c, custody.Candidate{Namespace: "live", Key: fmt.Sprintf("k%d-%d", w, i%7),
				Class: custody.ClassFact, Body: fmt.Sprintf("writer %d, write %d", w, i), Channel: custody.ChannelUser})
			return err
		})
	}
	write(principals, func(i int) error { // principals too: verify compares their keys with the log
		_, _, err := e.svc.AddPrincipal(e.ctx, custody.PrincipalInput{Tenant: "acme", Name: fmt.Sprintf("p%d", i), Roles: []string{"user"}})
		return err
	})
	// The writers write until the verify runs are done, or at most their
	// bound: writersDone tells the runs they have stopped.
	writersDone := make(chan struct{})
	go func() { wg.Wait(); close(writersDone) }()
	finish := func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("writer: %v", err)
		}
	}
	overlapped, runs := 0, 0
	for ; overlapped < overlaps; runs++ {
		select { // each run starts once a write has committed since the last
		case <-wroteOne:
		case <-writersDone:
		}
		before := wrote.Load()
		rep, err := e.svc.Verify(e.ctx, custody.VerifyOptions{})
		if err != nil {
			finish()
			t.Fatalf("verify run %d beside %d writers (%d writes so far): %v", runs+1, writers+1, wrote.Load(), err)
		}
		if rep.Records == 0 || rep.Principals < 2 {
			t.Errorf("verify run %d checked %d records and %d principals", runs+1, rep.Records, rep.Principals)
		}
		if wrote.Load() > before {
			overlapped++
		}
		select {
		case <-writersDone:
			if overlapped == overlaps {
				break
			}
			finish()
			t.Fatalf("the writers stopped (%d writes) before %d of %d verify runs had writes commit beside them: the test did not observe verify on a live store",
				wrote.Load(), overlapped, runs+1)
		default:
		}
	}

	// The twin: a body rewritten behind the log's back, writers still
	// running, is found and named.
	err := e.store.Update(e.ctx, func(tx custody.Tx) error {
		r, err := tx.Record(e.ctx, "acme", seed.ID)
		if err != nil {
			return err
		}
		r.Body = "rewritten behind the log's back"
		return tx.UpdateRecord(e.ctx, r)
	})
	if err != nil {
		finish()
		t.Fatal(err)
	}
	_, err = e.svc.Verify(e.ctx, custody.VerifyOptions{})
	finish()
	var d *custody.Difference
	if !errors.As(err, &d) || !strings.Contains(d.What, seed.ID) || !strings.Contains(d.What, "body") {
		t.Errorf("verify after a body was rewritten, writers running: %v; want a difference naming the body of %s", err, seed.ID)
	}
	t.Logf("%d verify runs, %d with writes beside them, %d writes", runs, overlapped, wrote.Load())
}
