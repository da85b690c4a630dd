package sqlite

import (
	"context"
	"errors"
	"fmt"
	"time"

	custody "github.com/custody-mem/custody"
)

// What an erasure leaves behind in the files. The erasure's transaction
// empties the record's row and takes it out of both FTS5 indexes
// (secure-delete, schema.sql), and the writer's secure_delete pragma
// zeroes every byte it frees, in pages and in free pages; PurgeErased then
// rewrites the indexes whole, which drops the terms only the erased
// bodies held (tidy.go). What remains are the WAL's frames: the pages as
// they were, with the body, until the WAL is reused from its start, which
// an idle server never does. So PurgeErased ends by checkpointing the
// whole WAL into the database file and truncating it, on the writer
// between two commits (as resetWAL does, wal.go), waiting for the readers
// that hold it at most scrubTries × walReaderWait; past that, the writer
// tries again after each commit and every walRetryEvery while idle, until
// it succeeds, and PurgeErased reports that it has not yet.

// scrubTries bounds how many times PurgeErased's truncation waits
// walReaderWait for the readers that hold the WAL.
const scrubTries = 20

// errScrubBusy is PurgeErased's error while readers hold the WAL.
var errScrubBusy = errors.New("readers held the WAL, so the frames written before the erasure are still in the WAL file; the writer truncates it as soon as they end")

// updateThenScrub runs fn in a write transaction, as Update does, and once
// it committed, truncates the WAL on the writer (scrubWAL).
func (s *Store) updateThenScrub(ctx context.Context, fn func(custody.Tx) error) error {
	w := &write{ctx: ctx, fn: fn, done: make(chan error, 1), scrubbed: make(chan error, 1)}
	select {
	case s.writes <- w:
	case <-ctx.Done():
		return ctx.Err()
	case <-s.closed:
		return unavailable(errClosed)
	}
	if err := <-w.done; err != nil {
		return err
	}
	return <-w.scrubbed
}

// scrubWAL runs on the writer goroutine: it checkpoints the whole WAL and
// truncates it, trying up to tries times while readers hold it. Until it
// succeeds, s.scrubPending stays set and the writer tries again.
func (s *Store) scrubWAL(ctx context.Context, tries int) error {
	s.scrubPending = true
	s.ckptMu.Lock()
	defer s.ckptMu.Unlock()
	for range tries {
		busy, err := s.truncateWAL(ctx)
		if err != nil {
			return fmt.Errorf("truncating the WAL after an erasure: %w", err)
		}
		if !busy {
			s.scrubPending = false
			s.walRetryAt, s.walRetryAfter = WALResetBytes, time.Time{}
			return nil
		}
	}
	return errScrubBusy
}

// scrubAfter is, for the writer after a commit, the scrub requests of
// batch's writes: it truncates the WAL if one asked or one is pending,
// answers them, and reports whether it did anything (else resetWAL runs).
func (s *Store) scrubAfter(ctx context.Context, batch []*write) bool {
	var asked []chan error
	for _, w := range batch {
		if w.scrubbed != nil {
			asked = append(asked, w.scrubbed)
		}
	}
	if len(asked) == 0 && !s.scrubPending {
		return false
	}
	tries := 1
	if len(asked) > 0 {
		tries = scrubTries
	}
	err := s.scrubWAL(ctx, tries)
	for _, c := range asked {
		c <- err
	}
	return true
}
