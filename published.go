package custody

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/custody-mem/custody/tlog"
)

// ErrRolledBack is returned by CheckPublished when a tenant's log is
// behind, or disagrees with, the last checkpoint of it the server
// published: the store was rolled back, truncated or rewritten, or the
// checkpoint file was removed.
var ErrRolledBack = errors.New("the store's log is behind or disagrees with the last checkpoint this server published")

// ErrOtherStore is returned by CheckPublished when the checkpoint file
// holds checkpoints of another store's logs (another log name): it is
// that store's file, not a sign that this store was rolled back.
var ErrOtherStore = errors.New("the checkpoint file belongs to another store")

// Published is how the store's logs stand against the checkpoints the
// server last published (Options.CheckpointFile, which holds one per
// tenant). The sizes are summed over the tenants' logs.
type Published struct {
	File    string // the checkpoint file; "" when the service keeps none
	Missing bool   // no checkpoint file
	Size    uint64 // entries the file's checkpoints cover
	LogSize uint64 // entries in the store's logs
	// Stored is the size of the latest checkpoints stored in the database,
	// and HasStored whether there is one: a server has published
	// checkpoints of this store before.
	Stored    uint64
	HasStored bool
	// Logs is each tenant's log.
	Logs []PublishedLog
}

// PublishedLog is one tenant's log against the checkpoint file.
type PublishedLog struct {
	Tenant    string
	Size      uint64 // entries the file's checkpoint of it covers
	InFile    bool   // the file holds a checkpoint of it
	LogSize   uint64
	Stored    uint64
	HasStored bool
}

// CheckPublished compares the store's logs with the checkpoints in
// Options.CheckpointFile, the copy outside the database of the last ones
// the server published, before a server starts on the store. It returns
// an error wrapping ErrRolledBack when a checkpoint of the file does not
// verify under this server's key and the origin of its tenant's log,
// covers more entries than that log holds, or has a root the log does not
// produce at that size; when the file is missing although the database
// holds checkpoints this server signed (which are written only after the
// file), or lacks the checkpoint of a tenant whose log has one stored. A
// checkpoint of the log all tenants once shared (see LegacyLog) is held to
// that log as the tenants' logs rebuild it. A missing file on a store that
// holds none (a first start, or a store filled by offline commands) is
// reported in Published.Missing, not as an error.
//
// It reads the stored tree nodes, not the leaves: Verify recomputes the
// trees from the leaves and checks everything else.
func (s *Service) CheckPublished(ctx context.Context) (*Published, error) {
	p := &Published{File: s.opts.CheckpointFile}
	var notes [][]byte
	if p.File != "" {
		b, err := ReadCheckpointFile(p.File)
		if err != nil {
			return nil, fmt.Errorf("reading the checkpoint file: %w", err)
		}
		p.Missing, notes = b == nil, SplitNotes(b)
	}
	err := s.store.View(ctx, func(tx Tx) error {
		tenants, err := tx.LogTenants(ctx)
		if err != nil {
			return err
		}
		byTenant := map[string]*PublishedLog{}
		for _, t := range tenants {
			l := PublishedLog{Tenant: t}
			if l.LogSize, err = tx.LogSize(ctx, t); err != nil {
				return err
			}
			l.Stored, _, err = tx.LatestCheckpoint(ctx, t)
			switch {
			case err == nil:
				l.HasStored = true
			case !errors.Is(err, ErrNotFound):
				return err
			}
			p.Logs = append(p.Logs, l)
		}
		for i := range p.Logs {
			l := &p.Logs[i]
			byTenant[l.Tenant] = l
			p.LogSize += l.LogSize
			p.Stored += l.Stored
			p.HasStored = p.HasStored || l.HasStored
		}
		var legacy *tlog.MemNodes
		var legacySize uint64
		legacyRead := false
		for _, msg := range notes {
			t, ok := s.tenantOf(noteOrigin(msg))
			if !ok {
				if !legacyRead {
					legacy, legacySize, err = legacyTree(ctx, tx, func(t string) tlog.NodeReader { return LogOf(tx, t) })
					if err != nil {
						return err
					}
					legacyRead = true
				}
				if name, ok := s.otherLogName(noteOrigin(msg)); ok && legacy == nil {
					return fmt.Errorf("%w: %s holds a checkpoint of the log %s, a log of the store whose log name is %s, not of this store (log name %s, whose logs are %s/<tenant>). "+
						"Each store has a checkpoint file of its own: start the store that file belongs to with its own flags, or, if this store has never had its own file, move that one away",
						ErrOtherStore, p.File, noteOrigin(msg), name, s.opts.LogOrigin, s.opts.LogOrigin)
				}
				if _, err := s.checkLegacy(ctx, legacy, legacySize, msg); err != nil {
					return fmt.Errorf("the checkpoint file %s: %w", p.File, err)
				}
				continue
			}
			l := byTenant[t]
			if l == nil {
				l = &PublishedLog{Tenant: t}
			}
			cp, err := s.extends(ctx, LogOf(tx, t), l.LogSize, msg)
			if err != nil {
				return err
			}
			l.Size, l.InFile = cp.Size, true
			p.Size += cp.Size
		}
		if p.Missing {
			return nil
		}
		for _, l := range p.Logs {
			if l.HasStored && !l.InFile {
				return fmt.Errorf("%w: the checkpoint file %s holds no checkpoint of %s's log, but the store holds checkpoints of it this server signed (the latest covers %d of its %d entries): the file may have been replaced to hide a rollback",
					ErrRolledBack, p.File, l.Tenant, l.Stored, l.LogSize)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if p.Missing && p.HasStored {
		return nil, fmt.Errorf("%w: the checkpoint file %s is missing, but the store holds checkpoints this server signed (the latest cover %d of the logs' %d entries): the file may have been removed to hide a rollback",
			ErrRolledBack, p.File, p.Stored, p.LogSize)
	}
	return p, nil
}

// otherLogName returns the log name of origin, a tenant's log origin
// NAME/TENANT of an installation other than this one.
func (s *Service) otherLogName(origin string) (string, bool) {
	i := strings.LastIndexByte(origin, '/')
	if i <= 0 || origin[:i] == s.opts.LogOrigin || ValidName("tenant", origin[i+1:]) != nil || ValidLogName(origin[:i]) != nil {
		return "", false
	}
	return origin[:i], true
}

// extends checks that the tenant's log r, of size, extends note, a
// checkpoint of it from the checkpoint file; an error wraps
// ErrRolledBack.
func (s *Service) extends(ctx context.Context, r TenantLog, size uint64, note []byte) (tlog.Checkpoint, error) {
	file := s.opts.CheckpointFile
	cp, err := s.OpenCheckpoint(r.Tenant, note)
	if err != nil {
		return cp, fmt.Errorf("%w: the checkpoint of %s's log in the checkpoint file %s does not verify under this server's key and log origin: %w", ErrRolledBack, r.Tenant, file, err)
	}
	if cp.Size > size {
		return cp, fmt.Errorf("%w: the checkpoint file %s covers %d entries of %s's log but the store's log has only %d (the store was rolled back or truncated)",
			ErrRolledBack, file, cp.Size, r.Tenant, size)
	}
	root, err := tlog.RootHash(ctx, r, cp.Size)
	if err != nil {
		return cp, fmt.Errorf("%w: %s's log has no tree of size %d, which the checkpoint file %s covers: %w", ErrRolledBack, r.Tenant, cp.Size, file, err)
	}
	if !bytes.Equal(root, cp.Root) {
		return cp, fmt.Errorf("%w: at size %d %s's log has another root than the checkpoint file %s (history was rewritten)", ErrRolledBack, cp.Size, r.Tenant, file)
	}
	return cp, nil
}

// publish writes msg, a checkpoint of tenant's log as it is, to
// Options.CheckpointFile in place of the tenant's checkpoint there, unless
// the file holds it or a newer one already. The checkpoint the file holds
// must be one the log extends, unless accept: a file ahead of the log is
// the evidence of a rollback, and is not overwritten by accident. The
// other tenants' checkpoints, and one of the old shared log, stay as they
// are.
func (s *Service) publish(ctx context.Context, tenant string, msg []byte, accept bool) error {
	file := s.opts.CheckpointFile
	if file == "" {
		return nil
	}
	s.pubMu.Lock()
	defer s.pubMu.Unlock()
	b, err := ReadCheckpointFile(file)
	if err != nil {
		return fmt.Errorf("reading the checkpoint file: %w", err)
	}
	notes := SplitNotes(b)
	origin := s.LogOrigin(tenant)
	kept := notes[:0:0]
	var old []byte
	for _, n := range notes {
		if noteOrigin(n) == origin {
			old = n
		} else {
			kept = append(kept, n)
		}
	}
	if bytes.Equal(old, msg) {
		return nil
	}
	if old != nil && !accept {
		cp, err := s.OpenCheckpoint(tenant, msg)
		if err != nil {
			return err
		}
		log := LogOf(s.store, tenant)
		size, err := log.Size(ctx) // the log now: another call may have published a newer one
		if err != nil {
			return err
		}
		was, err := s.extends(ctx, log, size, old)
		if err != nil {
			return err
		}
		if was.Size >= cp.Size {
			return nil // the file holds a checkpoint as new, or newer
		}
	}
	kept = append(kept, msg)
	sort.SliceStable(kept, func(i, j int) bool { return noteOrigin(kept[i]) < noteOrigin(kept[j]) })
	if err := writeAtomic(file, bytes.Join(kept, nil)); err != nil {
		return fmt.Errorf("writing checkpoint copy: %w", err)
	}
	return nil
}

// AcceptRollback is CheckpointAll for a store whose logs the checkpoint
// file is ahead of, or disagrees with, when the operator has said to go on
// (custody serve --accept-rollback): each tenant's checkpoint in the file
// is replaced by a checkpoint of its log as it is.
func (s *Service) AcceptRollback(ctx context.Context) (int, error) {
	return s.checkpointAll(ctx, true, 1)
}
