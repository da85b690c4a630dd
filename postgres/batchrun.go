package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"runtime/debug"

	custody "github.com/custody-mem/custody"
	"github.com/jackc/pgx/v5"
)

// A batch's transaction, write by write (commit, writer.go).
//
// A write alone in its batch needs no savepoint: its error rolls back the
// whole transaction. In a batch, each write's held-back inserts, the
// release of its savepoint and the opening of the next write's are carried
// to the next write and sent with its first statement (one round trip for
// both; see batchTx.carried); the last write's are sent at its end, and
// its savepoint is released by the commit. When a carried statement
// fails, the write it came from is rolled back to its savepoint, and the
// write that carried it is run again.

// batchRun is one batch's transaction as it runs.
type batchRun struct {
	s     *Store
	ctx   context.Context
	tx    *connTx
	batch []*write
	errs  []error
	// busy marks the writes that found a lock held (errLockBusy): they
	// run again in the next batch.
	busy    []bool
	alone   bool
	opened  bool       // a savepoint is open for the next write
	closing *pgx.Batch // a lone write's held-back inserts
	ran     int        // writes kept
	locks   map[string]bool
	states  map[string]*tenantState // what the batch knows of the tenants it locked
	carry   carried                 // what the write before held back, to send with the next
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

// runResult says what became of a write the batch ran.
type runResult int

const (
	runDone  runResult = iota // kept, or failed on its own and undone
	runAgain                  // the write before failed in its round trip: run this one again
	runLost                   // the transaction is lost: every write fails
)

// run runs write i.
func (b *batchRun) run(i int) runResult {
	w := b.batch[i]
	if err := w.ctx.Err(); err != nil && b.carry.stmts.Len() == 0 {
		b.errs[i] = err
		return runDone
	}
	if !b.alone && !b.opened {
		if _, err := b.tx.Exec(b.ctx, "SAVEPOINT w"); err != nil {
			b.s.fail(b.errs, fmt.Errorf("savepoint: %w", err))
			return runLost
		}
		b.opened = true
	}
	held, known := maps.Clone(b.locks), maps.Clone(b.states)
	bt := &batchTx{Tx: b.tx, ctx: b.ctx, pending: b.carry.stmts, carried: b.carry.stmts.Len()}
	lt := &lockedTx{t: &txn{tx: bt}, locks: b.locks, noWait: len(b.locks) > 0, states: b.states, borders: &b.s.borders, keys: &b.s.keys}
	if err := w.ctx.Err(); err != nil { // it only sends the write before's statements
		b.errs[i] = err
	} else {
		b.errs[i] = runFn(w.fn, lt)
	}
	if b.errs[i] != nil && bt.carried > 0 {
		bt.flush() // the write before's statements go even so (errs[i] is this one's)
	}
	last := i == len(b.batch)-1
	switch {
	case bt.carryErr != nil:
	case b.errs[i] != nil:
	case b.alone: // its inserts go with the commit
		b.closing = &bt.pending
	case !last && bt.carried == 0: // its inserts go with the next write's first statement
		bt.execLater("RELEASE SAVEPOINT w")
		bt.execLater("SAVEPOINT w")
	default:
		if !last { // the next write's savepoint, in the same round trip
			bt.execLater("RELEASE SAVEPOINT w")
			bt.execLater("SAVEPOINT w")
		}
		b.errs[i] = bt.flush()
	}
	if bt.carryErr != nil { // the write before failed: undo it, and run this one again
		owner := b.carry
		b.errs[owner.owner], b.errs[i] = bt.carryErr, nil
		b.ran--
		b.carry = carried{}
		if !b.undo(owner.owner, owner.held, owner.known) {
			return runLost
		}
		return runAgain
	}
	b.carry = carried{}
	if lt.err != nil { // whatever fn made of it
		b.errs[i] = lt.err
	}
	if b.errs[i] != nil {
		if !b.undo(i, held, known) {
			return runLost
		}
		return runDone
	}
	if bt.pending.Len() > 0 && !b.alone {
		b.carry = carried{stmts: bt.pending, owner: i, held: held, known: known}
	}
	b.ran++
	return runDone
}

// undo rolls back write j to its savepoint, and the batch's locks and
// states back to held and known; false when the batch is lost.
func (b *batchRun) undo(j int, held map[string]bool, known map[string]*tenantState) bool {
	// A lock taken in the rolled-back savepoint may be gone with it: the
	// next write takes it again (taking a lock the transaction holds is a
	// no-op).
	clear(b.locks)
	maps.Copy(b.locks, held)
	clear(b.states)
	maps.Copy(b.states, known)
	if b.tx.Conn().IsClosed() || connError(b.errs[j]) {
		b.s.fail(b.errs, unavailable(b.errs[j]))
		return false
	}
	if b.alone {
		return false
	}
	if _, err := b.tx.Exec(b.ctx, "ROLLBACK TO SAVEPOINT w; RELEASE SAVEPOINT w"); err != nil {
		b.s.fail(b.errs, fmt.Errorf("savepoint: %w", err))
		return false
	}
	b.busy[j] = errors.Is(b.errs[j], errLockBusy)
	b.opened = false
	return true
}

// finish answers every write of the batch but those that found a lock
// held, which it returns to run again; all, if not nil, is the error of
// every write that has none of its own.
func (b *batchRun) finish(all error) (again []*write) {
	if all != nil {
		b.s.borders.forget()
	}
	for i, w := range b.batch {
		if b.busy[i] && all == nil {
			again = append(again, w)
			continue
		}
		if b.errs[i] == nil || b.busy[i] {
			b.errs[i] = all
		}
		w.done <- b.errs[i]
	}
	return again
}

// runFn runs a write's fn, turning a panic into that write's error: fn
// runs on the goroutine of whichever write leads the batch, and a panic
// there must neither leave its batch-mates unanswered nor reach another
// request's handler.
func runFn(fn func(custody.Tx) error, tx custody.Tx) (err error) {
	defer func() {
		if r := recover(); r != nil {
			slog.Error("postgres: a write panicked; it fails alone and its batch goes on", "panic", r, "stack", string(debug.Stack()))
			err = fmt.Errorf("postgres: the write failed on an internal error (a panic: %v); see the server's log", r)
		}
	}()
	return fn(tx)
}
