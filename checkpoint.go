package custody

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/custody-mem/custody/tlog"
	"golang.org/x/mod/sumdb/note"
)

// verifier returns the note signer and verifier of the server key.
func (s *Service) noteKeys() (note.Signer, note.Verifier, error) {
	return tlog.NewNoteSigner(s.opts.LogOrigin, s.key.SigningKey())
}

// VerifierKey is the text form of the key that verifies checkpoints
// (note.NewVerifier accepts it).
func (s *Service) VerifierKey() (string, error) {
	return note.NewEd25519VerifierKey(s.opts.LogOrigin, s.key.PublicKey())
}

// Checkpoint signs the current tree as a C2SP checkpoint, writes it to
// Options.CheckpointFile (a copy outside the database, so that a
// rolled-back database is caught by verify and by CheckPublished), stores
// it, and returns the signed note. If the tree has not grown since the
// last checkpoint, that one is returned (and written to the file, if the
// file holds another). It never replaces a checkpoint file that the log
// does not extend: that is an error wrapping ErrRolledBack (see
// AcceptRollback).
func (s *Service) Checkpoint(ctx context.Context) ([]byte, error) {
	return s.checkpoint(ctx, false)
}

func (s *Service) checkpoint(ctx context.Context, accept bool) ([]byte, error) {
	size, err := s.store.LogSize(ctx)
	if err != nil {
		return nil, err
	}
	last, msg, err := s.store.LatestCheckpoint(ctx)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	if err == nil && last == size {
		return msg, s.publish(ctx, msg, accept)
	}
	root, err := tlog.RootHash(ctx, s.store, size)
	if err != nil {
		return nil, err
	}
	signer, _, err := s.noteKeys()
	if err != nil {
		return nil, err
	}
	msg, err = tlog.SignCheckpoint(tlog.Checkpoint{Origin: s.opts.LogOrigin, Size: size, Root: root}, signer)
	if err != nil {
		return nil, err
	}
	// The copy outside the database first: a store that holds a checkpoint
	// whose file is missing is one whose file was removed (CheckPublished).
	if err := s.publish(ctx, msg, accept); err != nil {
		return nil, err
	}
	if err := s.store.SaveCheckpoint(ctx, size, msg); err != nil {
		return nil, err
	}
	return msg, nil
}

// OpenCheckpoint verifies a signed checkpoint of this server's log.
func (s *Service) OpenCheckpoint(msg []byte) (tlog.Checkpoint, error) {
	_, v, err := s.noteKeys()
	if err != nil {
		return tlog.Checkpoint{}, err
	}
	return tlog.OpenCheckpoint(msg, s.opts.LogOrigin, v)
}

func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".checkpoint-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// logRange checks a proof request against the current tree.
func (s *Service) logRange(ctx context.Context, a, b uint64, what string) error {
	size, err := s.store.LogSize(ctx)
	if err != nil {
		return err
	}
	if b > size || a > b || (what == "inclusion" && a >= b) {
		return invalid(what, "%s proof for %d, %d is out of range: the log has %d entries", what, a, b, size)
	}
	return nil
}

// InclusionProof proves that leaf index is in the tree of the given size.
func (s *Service) InclusionProof(ctx context.Context, index, size uint64) ([][]byte, error) {
	if err := s.logRange(ctx, index, size, "inclusion"); err != nil {
		return nil, err
	}
	return tlog.InclusionProof(ctx, s.store, index, size)
}

// ConsistencyProof proves that the tree of size from is a prefix of the tree
// of size to.
func (s *Service) ConsistencyProof(ctx context.Context, from, to uint64) ([][]byte, error) {
	if err := s.logRange(ctx, from, to, "consistency"); err != nil {
		return nil, err
	}
	return tlog.ConsistencyProof(ctx, s.store, from, to)
}

// LogEntryView is one log entry as a caller sees it: the entries it may
// read (see entryReader) in full; every other entry, of its tenant or
// another, only as the hash of the leaf (proof material).
type LogEntryView struct {
	Index    uint64      `json:"index"`
	Leaf     string      `json:"leaf,omitempty"` // base64 of the exact leaf bytes
	LeafHash string      `json:"leaf_hash"`
	Entry    *tlog.Entry `json:"entry,omitempty"`
}

// MaxLogEntries bounds one entries page.
const MaxLogEntries = 1000

// LogEntries returns the entries in [start, end) as the caller may see
// them.
func (s *Service) LogEntries(ctx context.Context, c *Caller, start, end uint64) ([]LogEntryView, error) {
	if end <= start {
		return nil, invalid("end", "end must be greater than start")
	}
	if end-start > MaxLogEntries {
		end = start + MaxLogEntries
	}
	leaves, err := s.store.Leaves(ctx, start, end)
	if err != nil {
		return nil, err
	}
	er := s.entryReader(c)
	out := make([]LogEntryView, 0, len(leaves))
	for _, l := range leaves {
		v := LogEntryView{Index: l.Index, LeafHash: base64.StdEncoding.EncodeToString(tlog.LeafHash(l.Data))}
		if l.Tenant == c.Tenant() {
			e, err := tlog.ParseLeaf(l.Data)
			if err != nil {
				return nil, fmt.Errorf("log entry %d: %w", l.Index, err)
			}
			ok, err := er.readable(ctx, e)
			if err != nil {
				return nil, err
			}
			if ok {
				v.Leaf, v.Entry = base64.StdEncoding.EncodeToString(l.Data), e
			}
		}
		out = append(out, v)
	}
	return out, nil
}
