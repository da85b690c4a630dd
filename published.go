package custody

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/custody-mem/custody/tlog"
)

// ErrRolledBack is returned by CheckPublished when the store's log is
// behind, or disagrees with, the last checkpoint the server published:
// the store was rolled back, truncated or rewritten, or the checkpoint
// file was removed.
var ErrRolledBack = errors.New("the store's log is behind or disagrees with the last checkpoint this server published")

// Published is how the store's log stands against the checkpoint the
// server last published (Options.CheckpointFile).
type Published struct {
	File    string // the checkpoint file; "" when the service keeps none
	Missing bool   // no checkpoint file
	Size    uint64 // entries the file's checkpoint covers
	LogSize uint64 // entries in the store's log
	// Stored is the size of the latest checkpoint stored in the database,
	// and HasStored whether there is one: a server has published
	// checkpoints of this store before.
	Stored    uint64
	HasStored bool
}

// CheckPublished compares the store's log with the checkpoint in
// Options.CheckpointFile, the copy outside the database of the last one
// the server published, before a server starts on the store. It returns
// an error wrapping ErrRolledBack when the file's checkpoint does not
// verify under this server's key and origin, covers more entries than the
// log holds, or has a root the log does not produce at that size; and
// when the file is missing although the database holds checkpoints this
// server signed (which are written only after the file). A missing file
// on a store that holds none (a first start, or a store filled by offline
// commands) is reported in Published.Missing, not as an error.
//
// It reads the stored tree nodes, not the leaves: Verify recomputes the
// tree from the leaves and checks everything else.
func (s *Service) CheckPublished(ctx context.Context) (*Published, error) {
	p := &Published{File: s.opts.CheckpointFile}
	var note []byte
	if p.File != "" {
		var err error
		if note, err = ReadCheckpointFile(p.File); err != nil {
			return nil, fmt.Errorf("reading the checkpoint file: %w", err)
		}
		p.Missing = note == nil
	}
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		if p.LogSize, err = tx.LogSize(ctx); err != nil {
			return err
		}
		p.Stored, _, err = tx.LatestCheckpoint(ctx)
		switch {
		case err == nil:
			p.HasStored = true
		case !errors.Is(err, ErrNotFound):
			return err
		}
		if note == nil {
			return nil
		}
		cp, err := s.extends(ctx, tx, p.LogSize, note)
		p.Size = cp.Size
		return err
	})
	if err != nil {
		return nil, err
	}
	if p.Missing && p.HasStored {
		return nil, fmt.Errorf("%w: the checkpoint file %s is missing, but the store holds checkpoints this server signed (the latest covers %d of the log's %d entries): the file may have been removed to hide a rollback",
			ErrRolledBack, p.File, p.Stored, p.LogSize)
	}
	return p, nil
}

// extends checks that the log of size, whose stored nodes r reads, extends
// note, a checkpoint from the checkpoint file; an error wraps
// ErrRolledBack.
func (s *Service) extends(ctx context.Context, r tlog.NodeReader, size uint64, note []byte) (tlog.Checkpoint, error) {
	file := s.opts.CheckpointFile
	cp, err := s.OpenCheckpoint(note)
	if err != nil {
		return cp, fmt.Errorf("%w: the checkpoint file %s does not verify under this server's key and log origin: %w", ErrRolledBack, file, err)
	}
	if cp.Size > size {
		return cp, fmt.Errorf("%w: the checkpoint file %s covers %d log entries but the store's log has only %d (the store was rolled back or truncated)",
			ErrRolledBack, file, cp.Size, size)
	}
	root, err := tlog.RootHash(ctx, r, cp.Size)
	if err != nil {
		return cp, fmt.Errorf("%w: the store's log has no tree of size %d, which the checkpoint file %s covers: %w", ErrRolledBack, cp.Size, file, err)
	}
	if !bytes.Equal(root, cp.Root) {
		return cp, fmt.Errorf("%w: at size %d the store's log has another root than the checkpoint file %s (history was rewritten)", ErrRolledBack, cp.Size, file)
	}
	return cp, nil
}

// publish writes msg, a checkpoint of the log as it is, to
// Options.CheckpointFile, unless the file holds it or a newer one already.
// The checkpoint the file holds must be one the log extends, unless
// accept: a file ahead of the log is the evidence of a rollback, and is
// not overwritten by accident.
func (s *Service) publish(ctx context.Context, msg []byte, accept bool) error {
	file := s.opts.CheckpointFile
	if file == "" {
		return nil
	}
	old, err := ReadCheckpointFile(file)
	if err != nil {
		return fmt.Errorf("reading the checkpoint file: %w", err)
	}
	if bytes.Equal(old, msg) {
		return nil
	}
	if old != nil && !accept {
		cp, err := s.OpenCheckpoint(msg)
		if err != nil {
			return err
		}
		size, err := s.store.LogSize(ctx) // the log now: another call may have published a newer one
		if err != nil {
			return err
		}
		was, err := s.extends(ctx, s.store, size, old)
		if err != nil {
			return err
		}
		if was.Size >= cp.Size {
			return nil // the file holds a checkpoint as new, or newer
		}
	}
	if err := writeAtomic(file, msg); err != nil {
		return fmt.Errorf("writing checkpoint copy: %w", err)
	}
	return nil
}

// AcceptRollback is Checkpoint for a store whose log the checkpoint file
// is ahead of, or disagrees with, when the operator has said to go on
// (custody serve --accept-rollback): the file is replaced by a checkpoint
// of the log as it is.
func (s *Service) AcceptRollback(ctx context.Context) ([]byte, error) {
	return s.checkpoint(ctx, true)
}
