package sqlite

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	custody "github.com/custody-mem/custody"
)

// The FTS5 indexes (search and the gate's trigrams) grow by one small
// segment each time the writer moves the pending records into them
// (pending.go), and FTS5 merges segments four at a time as it goes.
// A lookup reads every segment, so the gate's trigram lookups ran twice as
// fast once no level held more than one. The writer does that extra merging
// when it is idle, in steps of tidyPages pages, so it never holds up a
// write for long; usermerge 2 (set in schema.sql) makes a step merge any
// level with two segments.
const (
	tidyAfter = 50 * time.Millisecond // idle time before the writer tidies
	tidyPages = 32                    // pages merged per step and table
)

var ftsTables = []string{"records_fts", "records_tri"}

// mergeStep moves the pending records into the indexes, then runs one
// merge step on each FTS5 table, and reports whether any of it did
// something.
func (t *txn) mergeStep(ctx context.Context) (bool, error) {
	did, err := t.flushPending(ctx)
	if err != nil {
		return false, err
	}
	for _, table := range ftsTables {
		var before, after int64
		if err := t.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&before); err != nil {
			return false, err
		}
		if err := t.exec(ctx, fmt.Sprintf(`INSERT INTO %[1]s (%[1]s, rank) VALUES ('merge', %d)`, table, tidyPages)); err != nil {
			return false, err
		}
		if err := t.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&after); err != nil {
			return false, err
		}
		did = did || after-before >= 2 // FTS5's sign that the step merged pages
	}
	return did, nil
}

// tidyStep is one idle-time merge step in its own transaction; it reports
// whether there may be more to do.
func (s *Store) tidyStep(ctx context.Context) bool {
	did := false
	w := &write{ctx: ctx, done: make(chan error, 1), fn: func(tx custody.Tx) (err error) {
		did, err = tx.(*txn).mergeStep(ctx)
		return err
	}}
	s.commit(ctx, []*write{w})
	if err := <-w.done; err != nil {
		if ctx.Err() == nil {
			slog.Warn("sqlite: merging the search indexes failed; will retry after the next write", "db", s.path, "err", err)
		}
		return false
	}
	return did
}

// tidyShare is the share of a core tidying takes while searches run: a
// step's commit also empties every reader's page cache, so after a burst
// of writes, tidying at full speed slowed searches by more than its own
// CPU.
const tidyShare = 0.25

// tidyPaced is tidyStep, and the pause before the next step: a
// millisecond, or, if a search ranked since the step before, long enough
// that tidying takes tidyShare of a core.
func (s *Store) tidyPaced(ctx context.Context) (more bool, pause time.Duration) {
	searches := s.search.byCopy.Load() + s.search.byFTS.Load()
	start := time.Now()
	more = s.tidyStep(ctx)
	pause = tidyPause(time.Since(start), searches != s.lastTidySearches)
	s.lastTidySearches = searches
	return more, pause
}

// tidyPause is the pause after a tidy step that took step: a millisecond,
// or, if searches ran, long enough that tidying takes tidyShare of a core.
func tidyPause(step time.Duration, searched bool) time.Duration {
	if !searched {
		return time.Millisecond
	}
	return max(time.Millisecond, time.Duration(float64(step)*(1-tidyShare)/tidyShare))
}

// Tidy merges the search indexes until no level holds two segments, as the
// writer does when idle. Benchmarks call it to measure the state a server
// reaches after a quiet moment.
func (s *Store) Tidy(ctx context.Context) error {
	for {
		did := false
		err := s.Update(ctx, func(tx custody.Tx) (err error) {
			did, err = tx.(*txn).mergeStep(ctx)
			return err
		})
		if err != nil || !did {
			return err
		}
	}
}

// PurgeErased rewrites both FTS5 indexes whole ('optimize'), so that the
// terms of erased bodies leave the file: secure-delete (schema.sql)
// removes an erased record from the indexes' document lists at once, but
// FTS5 keeps a term whose list became empty until its segment is merged.
// The writer's secure_delete pragma zeroes the pages this frees. It costs
// a pass over the indexes, which an erasure request pays once. Then it
// truncates the WAL, whose older frames hold the pages as they were
// (scrub.go).
func (s *Store) PurgeErased(ctx context.Context) error {
	return s.updateThenScrub(ctx, func(tx custody.Tx) error {
		for _, table := range ftsTables {
			if err := tx.(*txn).exec(ctx, fmt.Sprintf(`INSERT INTO %[1]s (%[1]s) VALUES ('optimize')`, table)); err != nil {
				return fmt.Errorf("purging erased bodies from %s: %w", table, err)
			}
		}
		return nil
	})
}
