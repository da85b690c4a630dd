package sqlite

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strconv"
	"time"
)

// The WAL is kept bounded in two steps. The checkpointer copies committed
// frames into the database file every checkpointInterval, passively, on a
// connection of its own: it never blocks the writer or the readers. That
// alone never shrinks the WAL under continuous writes: SQLite restarts it
// from its start only when a write begins just as a checkpoint has caught
// up and no reader still reads from it, which steady writes and searches
// never leave room for (the WAL reached 4.3 GB after 100k writes). So the
// writer, between two commits, once the WAL file has passed WALResetBytes,
// runs a TRUNCATE checkpoint itself (after the checkpointer's run under
// way, if any: SQLite refuses a second checkpoint at once, without
// waiting): no write can come in meanwhile, most frames are already
// copied, and readers that begin while it waits read from the database
// file and do not hold it up. It waits at most
// walReaderWait for the readers already reading from the WAL to finish
// (reads are short transactions); when one reads longer (an export, a
// verify), it gives up, and tries again once the WAL has grown by a
// quarter of WALResetBytes more and walRetryEvery has passed: a long read
// costs the writer at most a third of its time (walReaderWait of every
// walReaderWait+walRetryEvery), and the WAL grows by what it writes
// while the read lasts.
const (
	// checkpointInterval is how often the checkpointer copies committed
	// WAL frames into the database file.
	checkpointInterval = 100 * time.Millisecond
	// WALResetBytes is the size of the WAL file from which the writer
	// resets it between commits. Under continuous writes and short reads
	// the file stays under four times this (WALBound).
	WALResetBytes = 16 << 20
	// WALBound is what docs/operations.md promises of the WAL file under
	// continuous writes and short reads: it peaks just past WALResetBytes
	// when reads are quick, and a few resets that slow reads held up on a
	// loaded machine stay under it.
	WALBound = 4 * WALResetBytes
	// walReaderWait is how long a reset waits for the readers that were
	// reading from the WAL when it began; the writer waits as long.
	walReaderWait = 100 * time.Millisecond
	// walRetryEvery is how soon a reset that readers held up is tried again.
	walRetryEvery = 200 * time.Millisecond
	// busyTimeout is how long a connection waits for a lock (the DSN's
	// busy_timeout), and the writer's outside a reset.
	busyTimeout = 10 * time.Second
)

// walLimitPragma makes SQLite cut the WAL file back to WALResetBytes
// whenever it restarts the WAL from its start on its own, so that a file
// once grown (by a long read) does not stay that large.
var walLimitPragma = "&_pragma=journal_size_limit(" + strconv.Itoa(WALResetBytes) + ")"

// checkpointer runs passive WAL checkpoints beside the writer: they never
// block it or the readers.
func (s *Store) checkpointer(ctx context.Context) {
	tick := time.NewTicker(checkpointInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			s.ckptMu.Lock()
			_, err := s.ckpt.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`)
			s.ckptMu.Unlock()
			if err != nil && ctx.Err() == nil {
				slog.Warn("sqlite: WAL checkpoint failed; will retry", "db", s.path, "err", err)
			}
		}
	}
}

// WALBytes is the size of the store's WAL file now, in bytes (0 when it
// has been truncated away): what the custody_sqlite_wal_bytes metric
// reports.
func (s *Store) WALBytes() int64 {
	fi, err := os.Stat(s.path + "-wal")
	if err != nil {
		return 0
	}
	return fi.Size()
}

// resetWAL runs on the writer goroutine after a commit: once the WAL file
// has passed WALResetBytes (or, after a try that readers held up, grown
// more and waited walRetryEvery), it checkpoints the whole WAL and
// truncates it (see the comment at the top of this file).
func (s *Store) resetWAL(ctx context.Context) {
	size := s.WALBytes()
	if s.walRetryAt == 0 {
		s.walRetryAt = WALResetBytes
	}
	if size < s.walRetryAt {
		return
	}
	now := time.Now()
	if now.Before(s.walRetryAfter) {
		return
	}
	// SQLite gives up at once, without waiting, on a checkpoint while
	// another runs: wait for the checkpointer's.
	s.ckptMu.Lock()
	busy, err := s.truncateWAL(ctx)
	s.ckptMu.Unlock()
	if err != nil && ctx.Err() == nil {
		slog.Warn("sqlite: resetting the WAL failed; will retry", "db", s.path, "wal_bytes", size, "err", err)
	}
	if err != nil || busy {
		// A reader longer than walReaderWait holds the WAL.
		s.walRetryAt, s.walRetryAfter = size+WALResetBytes/4, now.Add(walRetryEvery)
		return
	}
	s.walRetryAt, s.walRetryAfter = WALResetBytes, time.Time{}
}

// truncateWAL runs PRAGMA wal_checkpoint(TRUNCATE) on the writer's
// connection, waiting at most walReaderWait for readers, and reports
// whether a reader kept it from finishing.
func (s *Store) truncateWAL(ctx context.Context) (busy bool, err error) {
	setTimeout := func(d time.Duration) error {
		_, err := s.wc.conn.ExecContext(ctx, `PRAGMA busy_timeout = `+strconv.FormatInt(d.Milliseconds(), 10))
		return err
	}
	if err := setTimeout(walReaderWait); err != nil {
		return false, err
	}
	var b, frames, copied int
	err = s.wc.conn.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&b, &frames, &copied)
	// The busy timeout must come back even when the context ended: the
	// connection serves the next write.
	if rerr := setTimeout(busyTimeout); rerr != nil {
		err = errors.Join(err, rerr)
	}
	return b != 0, err
}
