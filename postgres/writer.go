package postgres

import (
	"context"
	"sync/atomic"
	"time"

	custody "github.com/custody-mem/custody"
)

// Group commit. The writes of this process that wait at the same moment
// share one transaction and one commit (one WAL flush on the server): the
// first of them to take one of the process's writer slots runs every
// write queued by then, each in a savepoint of its own, so that an error
// in one rolls back that write alone and its batch-mates commit. Each
// write's decision is its own: its fn runs with the statements of the
// writes before it in the batch visible, exactly as if they had committed
// just before. Each write takes, before its first statement on a tenant,
// that tenant's advisory lock (lockedTx), held by the batch until it
// commits: batches of different tenants run side by side, on this server
// (up to half the pool's connections) and on every other.

// maxBatch bounds how many writes share one commit. Each write of a batch
// is a subtransaction, and PostgreSQL tracks at most 64 of them per
// transaction in shared memory before every snapshot of every other
// session has to look them up on disk: a batch stays under that.
const maxBatch = 32

// batchTimeout bounds a batch's statements. They do not run under any one
// caller's context: a request cancelled in the middle of a batch must not
// abort the transaction its batch-mates are in (a cancelled write that has
// not begun is skipped).
const batchTimeout = time.Minute

// write is one Update waiting for its batch.
type write struct {
	ctx  context.Context
	fn   func(custody.Tx) error
	done chan error
	// taken is set once a batch has taken the write from the queue: its
	// caller then waits for the answer, and leads no batch of its own.
	taken atomic.Bool
}

// Update runs fn in one write transaction: with other concurrent writes of
// this process it shares a commit (group commit), but each runs inside its
// own savepoint, so an error from fn rolls back fn's changes only. Before
// its first statement on a tenant, fn's Tx takes that tenant's advisory
// lock, so that writers of one tenant on every server run one at a time;
// the transaction is READ COMMITTED, so each statement after the lock sees
// every write committed before it. A write PostgreSQL aborts to break a
// deadlock between tenants' locks is run again.
func (s *Store) Update(ctx context.Context, fn func(custody.Tx) error) error {
	for try := 0; ; try++ {
		err := s.update(ctx, fn)
		if !deadlocked(err) || try == maxDeadlockRetries {
			return err
		}
	}
}

// update is one try of Update.
func (s *Store) update(ctx context.Context, fn func(custody.Tx) error) error {
	w := &write{ctx: ctx, fn: fn, done: make(chan error, 1)}
	select {
	case s.queue <- w:
	case <-ctx.Done():
		return ctx.Err()
	}
	for {
		select {
		case err := <-w.done: // a batch led by another write ran it
			return err
		case s.writer <- struct{}{}:
			if w.taken.Load() { // another write's batch runs it: wait for it
				<-s.writer
				return <-w.done
			}
			// This write leads: it runs what is queued (its own write
			// among them, or in a later batch it leads again).
			s.lead()
		}
	}
}

// lead runs the writes queued now, holding a writer slot.
func (s *Store) lead() {
	defer func() { <-s.writer }()
	batch := s.drain()
	if len(batch) == 0 {
		s.emptyLeads.Add(1)
	}
	s.commitAll(batch)
}

// UpdateEach runs fns in one batch, each in its own savepoint, in order
// (custody.GroupUpdater).
func (s *Store) UpdateEach(ctx context.Context, fns ...func(custody.Tx) error) []error {
	errs := make([]error, len(fns))
	ws := make([]*write, len(fns))
	for i, fn := range fns {
		ws[i] = &write{ctx: ctx, fn: fn, done: make(chan error, 1)}
	}
	select {
	case s.writer <- struct{}{}:
	case <-ctx.Done():
		for i := range errs {
			errs[i] = ctx.Err()
		}
		return errs
	}
	func() {
		defer func() { <-s.writer }()
		s.commitAll(ws)
	}()
	for i, w := range ws {
		errs[i] = <-w.done
	}
	return errs
}

// drain takes the writes queued now, up to maxBatch.
func (s *Store) drain() []*write { return s.drainTo(nil) }

// drainTo appends to batch the writes queued now, up to maxBatch in all.
func (s *Store) drainTo(batch []*write) []*write {
	for len(batch) < maxBatch {
		select {
		case w := <-s.queue:
			w.taken.Store(true)
			batch = append(batch, w)
		default:
			return batch
		}
	}
	return batch
}

// commit runs batch in one transaction and answers every write of it but
// those it returns: writes that found a tenant's lock held by another
// transaction (errLockBusy), to be run again at the head of the next
// batch. Only the first write of a batch waits for a lock (it holds none
// yet, so it closes no cycle); the others only try, so batches of
// different servers never deadlock on each other.
func (s *Store) commit(batch []*write) (again []*write) {
	if len(batch) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), batchTimeout)
	defer cancel()
	b := &batchRun{s: s, ctx: ctx, batch: batch, errs: make([]error, len(batch)), busy: make([]bool, len(batch)),
		alone: len(batch) == 1, locks: map[string]bool{}, states: map[string]*tenantState{}}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return b.finish(unavailable(err))
	}
	defer conn.Release()
	b.tx = &connTx{c: conn}
	defer b.tx.Rollback(ctx) // after the commit, a no-op
	switch b.ahead() {
	case aheadDone:
		return b.finish(nil)
	case aheadLost:
		return b.finish(nil) // every write has the connection's error
	}
	if !b.checkPrincipals() {
		return b.finish(nil)
	}
	if len(b.batch) == 0 {
		return nil
	}
	for i := 0; i < len(batch); i++ {
		switch b.run(i) {
		case runLost:
			return b.finish(nil)
		case runAgain:
			i--
		}
	}
	if b.ran == 0 {
		return b.finish(nil) // nothing to keep: the deferred rollback ends it
	}
	landed := s.borders.committing(b.locks, b.states)
	err, stmtErr := b.tx.commitAfter(ctx, b.closing)
	landed(err == nil && stmtErr == nil)
	switch {
	case stmtErr != nil && !connError(stmtErr): // the lone write's own failure
		b.errs[0] = stmtErr
		return b.finish(nil)
	case stmtErr != nil:
		return b.finish(unavailable(stmtErr))
	case err != nil:
		return b.finish(unavailable(err))
	}
	return b.finish(nil)
}

// commitAll runs batch and, at the head of the batches after it, the
// writes it had to run again, until every one is answered.
func (s *Store) commitAll(batch []*write) {
	for len(batch) > 0 {
		again := s.commit(batch)
		if len(again) == 0 {
			return
		}
		batch = s.drainTo(again)
	}
}

// fail makes every write of a batch fail with err, whatever its own
// outcome: the transaction they shared is lost.
func (s *Store) fail(errs []error, err error) {
	for i := range errs {
		errs[i] = unavailable(err)
	}
}
