package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"runtime"
	"time"

	custody "github.com/custody-mem/custody"
)

// maxBatch bounds how many writes share one commit.
const maxBatch = 128

// write is one Update waiting for the writer.
type write struct {
	ctx  context.Context
	fn   func(custody.Tx) error
	done chan error
	// group, if set, are writes sent together by UpdateEach: they join the
	// batch in their order, and this write itself does not.
	group []*write
	// scrubbed, if set, asks the writer to truncate the WAL once the
	// write committed, and gets the outcome (scrub.go).
	scrubbed chan error
}

// join adds w (or the writes of its group) to batch.
func (w *write) join(batch []*write) []*write {
	if w.group != nil {
		return append(batch, w.group...)
	}
	return append(batch, w)
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
	case s.writes <- &write{ctx: ctx, group: ws}:
	case <-ctx.Done():
		for i := range errs {
			errs[i] = ctx.Err()
		}
		return errs
	case <-s.closed:
		for i := range errs {
			errs[i] = unavailable(errClosed)
		}
		return errs
	}
	for i, w := range ws {
		errs[i] = <-w.done // the writer answers every write of the group
	}
	return errs
}

// writer is the one goroutine that writes. It takes the writes waiting at
// that moment (up to maxBatch), runs each in a savepoint of one transaction,
// and commits once: a commit (WAL frames, FTS5 segment flush) is most of a
// write's cost, so under concurrent load it is shared.
//
// When no write has come for tidyAfter, it tidies the search indexes a
// step at a time (see tidy.go) until they are merged or a write comes.
func (s *Store) writer(ctx context.Context) {
	idle := time.NewTimer(s.tidyAfter)
	defer idle.Stop()
	untidy := true
	for {
		var batch []*write
		select {
		case <-ctx.Done():
			return
		case <-idle.C:
			var pause time.Duration
			if untidy {
				untidy, pause = s.tidyPaced(ctx)
			}
			if !untidy && s.scrubPending {
				s.scrubWAL(ctx, 1) // readers held the WAL after an erasure (scrub.go)
			}
			switch {
			case untidy:
				idle.Reset(pause)
			case s.scrubPending:
				idle.Reset(walRetryEvery)
			}
			continue
		case w := <-s.writes:
			batch = w.join(batch)
		}
		batch = s.gather(batch)
		s.lastBatch = len(batch)
		s.commit(ctx, batch)
		if !s.scrubAfter(ctx, batch) {
			s.resetWAL(ctx)
		}
		untidy = true
		if s.scrubPending {
			idle.Reset(min(s.tidyAfter, walRetryEvery))
		} else {
			idle.Reset(s.tidyAfter)
		}
	}
}

// gather adds to batch the writes that come while the writer yields its
// processor, up to maxBatch. A caller handing the writer a write wakes it
// on the caller's own processor, ahead of the other callers ready to run
// there, so a writer that committed at once would commit a write or two
// at a time however many callers are under way (6 to 8 writes a commit
// under 64 HTTP clients). So the writer yields first: the callers ready
// to run go on to their writes, and it takes them all (about 21 a commit
// under the same load); as long as yielding brings more, it yields again.
// It yields only when its last commit served more than one write: a lone
// writer, or one among long searches, commits at once as before, rather
// than wait behind whatever else is ready to run.
func (s *Store) gather(batch []*write) []*write {
	if s.lastBatch < 2 {
		return s.drain(batch)
	}
	for len(batch) < maxBatch {
		runtime.Gosched()
		n := len(batch)
		if batch = s.drain(batch); len(batch) == n {
			break
		}
	}
	return batch
}

// drain adds to batch the writes waiting now, up to maxBatch.
func (s *Store) drain(batch []*write) []*write {
	for len(batch) < maxBatch {
		select {
		case w := <-s.writes:
			batch = w.join(batch)
		default:
			return batch
		}
	}
	return batch
}

// CommitStats counts the writer's transactions and the writes they took
// since the store opened: writes ÷ commits is how many writes a commit
// served on average (group commit's batch).
func (s *Store) CommitStats() (commits, writes int64) {
	return s.commits.Load(), s.committed.Load()
}

func (s *Store) commit(ctx context.Context, batch []*write) {
	s.commits.Add(1)
	s.committed.Add(int64(len(batch)))
	errs := make([]error, len(batch))
	finish := func(commitErr error) {
		for i, w := range batch {
			if errs[i] == nil {
				errs[i] = commitErr
			}
			w.done <- errs[i]
		}
	}
	t, err := s.begin(ctx)
	if err != nil {
		finish(unavailable(err))
		return
	}
	wc := t.wc
	if err := t.checkPrincipals(ctx, batch, errs); err != nil {
		wc.rollback(ctx)
		finish(unavailable(err))
		return
	}
	// A write alone in its batch needs no savepoint: its error rolls back
	// the whole transaction. Each savepoint statement costs about what a
	// small insert does.
	alone := len(batch) == 1
	for i, w := range batch {
		if errs[i] != nil { // its principals changed (checkPrincipals)
			continue
		}
		if err := w.ctx.Err(); err != nil {
			errs[i] = err
			continue
		}
		mark := t.indexMark()
		if !alone {
			if err := t.exec(ctx, "SAVEPOINT w"); err != nil {
				wc.rollback(ctx)
				s.known.forget()
				finish(unavailable(err))
				return
			}
		}
		errs[i] = w.fn(t)
		if errs[i] != nil {
			s.known.forget() // it may hold what was rolled back
			if alone {
				wc.rollback(ctx)
				finish(nil)
				return
			}
			if err := t.exec(ctx, "ROLLBACK TO w"); err != nil {
				s.abort(ctx, errs, fmt.Errorf("savepoint: %w", err))
				finish(nil)
				return
			}
			t.undoIndexChanges(mark)
		}
		if !alone {
			if err := t.exec(ctx, "RELEASE w"); err != nil {
				s.abort(ctx, errs, fmt.Errorf("savepoint: %w", err))
				finish(nil)
				return
			}
		}
	}
	if s.pendingRows >= pendingFlushRows {
		if _, err := t.flushPending(ctx); err != nil {
			s.abort(ctx, errs, fmt.Errorf("moving pending records into the search indexes: %w", err))
			finish(nil)
			return
		}
	}
	changed, err := t.countIndexChanges(ctx)
	if err != nil {
		s.abort(ctx, errs, fmt.Errorf("counting a change to the search index: %w", err))
		finish(nil)
		return
	}
	if changed.changes() {
		s.search.willApply()
	}
	err = wc.commit(ctx)
	if changed.changes() {
		s.search.apply(changed, err == nil)
	}
	if err != nil {
		s.known.forget()
		s.pendingRows = pendingFlushRows
		for i := range errs {
			if errs[i] == nil {
				errs[i] = unavailable(err)
			}
		}
	}
	finish(nil)
}

// begin starts the writer's transaction on its own connection and checks
// what the writer knows (known.go). A connection database/sql has given up
// on (one whose statement a cancelled request interrupted, say) is
// replaced by a fresh one from the pool, with its statements, and what
// the writer knew is forgotten: another connection's data version says
// nothing of it.
func (s *Store) begin(ctx context.Context) (*txn, error) {
	err := s.wc.begin(ctx)
	if errors.Is(err, sql.ErrConnDone) || errors.Is(err, driver.ErrBadConn) {
		s.wc.abandon()
		c, cerr := s.w.Conn(ctx)
		if cerr != nil {
			return nil, cerr
		}
		s.wc = newWriterConn(c)
		s.known.forget()
		s.known.version = -1 // data versions are never negative
		err = s.wc.begin(ctx)
	}
	if err != nil {
		return nil, err
	}
	t := &txn{wc: s.wc, known: &s.known, pending: &s.pendingRows}
	if err := s.known.check(ctx, t); err != nil {
		s.wc.rollback(ctx)
		return nil, err
	}
	return t, nil
}

// abort rolls back a batch whose savepoint handling or move of the
// pending records failed: every write of it fails, whatever its own outcome.
func (s *Store) abort(ctx context.Context, errs []error, err error) {
	s.wc.rollback(ctx)
	s.known.forget()
	s.pendingRows = pendingFlushRows // a move it made is undone: move at the next commit
	for j := range errs {
		errs[j] = unavailable(err)
	}
}
