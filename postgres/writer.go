package postgres

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/jackc/pgx/v5"
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
			// This write leads: it runs what is queued (its own write
			// among them, or in a later batch it leads again).
			s.commitAll(s.drain())
			<-s.writer
		}
	}
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
	s.commitAll(ws)
	<-s.writer
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
	errs := make([]error, len(batch))
	busy := make([]bool, len(batch))
	finish := func(all error) {
		for i, w := range batch {
			if busy[i] && all == nil {
				again = append(again, w)
				continue
			}
			if errs[i] == nil || busy[i] {
				errs[i] = all
			}
			w.done <- errs[i]
		}
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		finish(unavailable(err))
		return nil
	}
	defer conn.Release()
	tx := &connTx{c: conn}
	defer tx.Rollback(ctx) // after the commit, a no-op
	// A write alone in its batch needs no savepoint: its error rolls back
	// the whole transaction. In a batch, each write's held-back inserts,
	// the release of its savepoint and the opening of the next write's are
	// carried to the next write and sent with its first statement (one
	// round trip for both; see batchTx.carried); the last write's are sent
	// at its end, and its savepoint is released by the commit. When a
	// carried statement fails, the write it came from is rolled back to
	// its savepoint, and the write that carried it is run again.
	alone := len(batch) == 1
	opened := false        // a savepoint is open for the next write
	var closing *pgx.Batch // a lone write's held-back inserts
	ran := 0
	locks := map[string]bool{}          // the tenants' locks the batch holds
	states := map[string]*tenantState{} // and what it knows of those tenants
	var carry carried                   // what the write before held back, to send with the next
	// undo rolls back write j to its savepoint, the batch's locks and
	// states back to held and known; false when the batch is lost.
	undo := func(j int, held map[string]bool, known map[string]*tenantState) bool {
		// A lock taken in the rolled-back savepoint may be gone with
		// it: the next write takes it again (taking a lock the
		// transaction holds is a no-op).
		clear(locks)
		maps.Copy(locks, held)
		clear(states)
		maps.Copy(states, known)
		if tx.Conn().IsClosed() || connError(errs[j]) {
			s.fail(errs, unavailable(errs[j]))
			return false
		}
		if alone {
			return false
		}
		if _, err := tx.Exec(ctx, "ROLLBACK TO SAVEPOINT w; RELEASE SAVEPOINT w"); err != nil {
			s.fail(errs, fmt.Errorf("savepoint: %w", err))
			return false
		}
		busy[j] = errors.Is(errs[j], errLockBusy)
		opened = false
		return true
	}
	for i := 0; i < len(batch); i++ {
		w := batch[i]
		if err := w.ctx.Err(); err != nil && carry.stmts.Len() == 0 {
			errs[i] = err
			continue
		}
		if !alone && !opened {
			if _, err := tx.Exec(ctx, "SAVEPOINT w"); err != nil {
				s.fail(errs, fmt.Errorf("savepoint: %w", err))
				finish(nil)
				return again
			}
			opened = true
		}
		held, known := maps.Clone(locks), maps.Clone(states)
		bt := &batchTx{Tx: tx, ctx: ctx, pending: carry.stmts, carried: carry.stmts.Len()}
		lt := &lockedTx{t: &txn{tx: bt}, locks: locks, noWait: len(locks) > 0, states: states, borders: &s.borders}
		if err := w.ctx.Err(); err != nil { // it only sends the write before's statements
			errs[i] = err
		} else {
			errs[i] = w.fn(lt)
		}
		if errs[i] != nil && bt.carried > 0 {
			bt.flush() // the write before's statements go even so (errs[i] is this one's)
		}
		switch {
		case bt.carryErr != nil:
		case errs[i] != nil:
		case alone: // its inserts go with the commit
			closing = &bt.pending
		case i < len(batch)-1 && bt.carried == 0: // its inserts go with the next write's first statement
			bt.execLater("RELEASE SAVEPOINT w")
			bt.execLater("SAVEPOINT w")
		default:
			if i < len(batch)-1 { // the next write's savepoint, in the same round trip
				bt.execLater("RELEASE SAVEPOINT w")
				bt.execLater("SAVEPOINT w")
			}
			errs[i] = bt.flush()
		}
		if bt.carryErr != nil { // the write before failed: undo it, and run this one again
			errs[carry.owner], errs[i] = bt.carryErr, nil
			ran--
			if !undo(carry.owner, carry.held, carry.known) {
				finish(nil)
				return again
			}
			carry = carried{}
			i--
			continue
		}
		carry = carried{}
		if lt.err != nil { // whatever fn made of it
			errs[i] = lt.err
		}
		if errs[i] != nil {
			if !undo(i, held, known) {
				finish(nil)
				return again
			}
			continue
		}
		if bt.pending.Len() > 0 && !alone {
			carry = carried{stmts: bt.pending, owner: i, held: held, known: known}
		}
		ran++
	}
	if ran == 0 {
		finish(nil) // nothing to keep: the deferred rollback ends it
		return again
	}
	landed := s.borders.committing(locks, states)
	err, stmtErr := tx.commitAfter(ctx, closing)
	landed(err == nil && stmtErr == nil)
	switch {
	case stmtErr != nil && !connError(stmtErr): // the lone write's own failure
		errs[0] = stmtErr
		finish(nil)
	case stmtErr != nil:
		finish(unavailable(stmtErr))
	case err != nil:
		finish(unavailable(err))
	default:
		finish(nil)
	}
	return again
}

// carried is what a write of a batch held back (its inserts, the release
// of its savepoint, the opening of the next write's), sent with the next
// write's first statement: the write it came from, and the batch's locks
// and states before it ran, to undo it should a statement fail.
type carried struct {
	stmts pgx.Batch
	owner int
	held  map[string]bool
	known map[string]*tenantState
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
