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

// noteKeys returns the note signer and verifier of tenant's log: the
// server key under the name of the log's origin.
func (s *Service) noteKeys(tenant string) (note.Signer, note.Verifier, error) {
	return tlog.NewNoteSigner(s.LogOrigin(tenant), s.key.SigningKey())
}

// VerifierKey is the text form of the key that verifies the checkpoints
// of tenant's log (note.NewVerifier accepts it): the server key under the
// log's origin.
func (s *Service) VerifierKey(tenant string) (string, error) {
	if err := ValidName("tenant", tenant); err != nil {
		return "", err
	}
	return note.NewEd25519VerifierKey(s.LogOrigin(tenant), s.key.PublicKey())
}

// Checkpoint signs the current tree of tenant's log as a C2SP checkpoint,
// writes it to Options.CheckpointFile (a copy outside the database, so
// that a rolled-back database is caught by verify and by CheckPublished),
// stores it, and returns the signed note. If the tree has not grown since
// the last checkpoint, that one is returned (and written to the file, if
// the file holds another). It never replaces a checkpoint in the file
// that the log does not extend: that is an error wrapping ErrRolledBack
// (see AcceptRollback). The checkpoint of an empty log is signed but
// neither stored nor published.
func (s *Service) Checkpoint(ctx context.Context, tenant string) ([]byte, error) {
	if err := ValidName("tenant", tenant); err != nil {
		return nil, err
	}
	return s.checkpoint(ctx, tenant, false)
}

// CheckpointAll signs a checkpoint of every tenant's log that grew since
// its last one (Checkpoint), and returns how many it signed.
func (s *Service) CheckpointAll(ctx context.Context) (int, error) {
	return s.checkpointAll(ctx, false, 1)
}

// CheckpointGrown is CheckpointAll for the logs that grew by at least n
// entries since their last checkpoint.
func (s *Service) CheckpointGrown(ctx context.Context, n uint64) (int, error) {
	return s.checkpointAll(ctx, false, max(n, 1))
}

func (s *Service) checkpointAll(ctx context.Context, accept bool, growth uint64) (int, error) {
	tenants, err := s.store.LogTenants(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, t := range tenants {
		size, err := s.store.LogSize(ctx, t)
		if err != nil {
			return n, err
		}
		last, _, err := s.store.LatestCheckpoint(ctx, t)
		if err == nil && size < last+growth && !accept {
			continue
		}
		if err != nil && !errors.Is(err, ErrNotFound) {
			return n, err
		}
		if _, err := s.checkpoint(ctx, t, accept); err != nil {
			return n, fmt.Errorf("checkpoint of %s's log: %w", t, err)
		}
		n++
	}
	return n, nil
}

func (s *Service) checkpoint(ctx context.Context, tenant string, accept bool) ([]byte, error) {
	log := LogOf(s.store, tenant)
	size, err := log.Size(ctx)
	if err != nil {
		return nil, err
	}
	last, msg, err := log.LatestCheckpoint(ctx)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	s.proofs.saw(tenant, size)
	if err == nil && last == size {
		return msg, s.publish(ctx, tenant, msg, accept)
	}
	msg, err = s.signSize(ctx, tenant, log, size)
	if err != nil {
		return nil, err
	}
	if size == 0 {
		return msg, nil
	}
	// The copy outside the database first: a store that holds a checkpoint
	// whose file is missing is one whose file was removed (CheckPublished).
	if err := s.publish(ctx, tenant, msg, accept); err != nil {
		return nil, err
	}
	if err := s.store.SaveCheckpoint(ctx, tenant, size, msg); err != nil {
		return nil, err
	}
	return msg, nil
}

// SignTree signs a checkpoint of tenant's log as it is now, without
// storing or publishing it: what is sent to a witness to learn what it
// holds before the server publishes anything. ErrNotFound for an empty
// log.
func (s *Service) SignTree(ctx context.Context, tenant string) ([]byte, error) {
	log := LogOf(s.store, tenant)
	size, err := log.Size(ctx)
	if err != nil {
		return nil, err
	}
	if size == 0 {
		return nil, fmt.Errorf("%w: %s's log is empty", ErrNotFound, tenant)
	}
	return s.signSize(ctx, tenant, log, size)
}

// signSize signs a checkpoint of the first size leaves of tenant's log.
func (s *Service) signSize(ctx context.Context, tenant string, log TenantLog, size uint64) ([]byte, error) {
	root, err := tlog.RootHash(ctx, log, size)
	if err != nil {
		return nil, err
	}
	signer, _, err := s.noteKeys(tenant)
	if err != nil {
		return nil, err
	}
	return tlog.SignCheckpoint(tlog.Checkpoint{Origin: s.LogOrigin(tenant), Size: size, Root: root}, signer)
}

// OpenCheckpoint verifies a signed checkpoint of tenant's log.
func (s *Service) OpenCheckpoint(tenant string, msg []byte) (tlog.Checkpoint, error) {
	_, v, err := s.noteKeys(tenant)
	if err != nil {
		return tlog.Checkpoint{}, err
	}
	return tlog.OpenCheckpoint(msg, s.LogOrigin(tenant), v)
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

// logRange checks a proof request against the current tree of tenant's
// log.
func (s *Service) logRange(ctx context.Context, tenant string, a, b uint64, what string) error {
	if (a < b || a == b && what != "inclusion") && s.proofs.holds(tenant, b) {
		return nil
	}
	size, err := s.store.LogSize(ctx, tenant)
	if err != nil {
		return err
	}
	s.proofs.saw(tenant, size)
	if b > size || a > b || (what == "inclusion" && a >= b) {
		return invalid(what, "%s proof for %d, %d is out of range: the log has %d entries", what, a, b, size)
	}
	return nil
}

// InclusionProof proves that leaf index of tenant's log is in its tree of
// the given size.
func (s *Service) InclusionProof(ctx context.Context, tenant string, index, size uint64) ([][]byte, error) {
	if err := s.logRange(ctx, tenant, index, size, "inclusion"); err != nil {
		return nil, err
	}
	return tlog.InclusionProof(ctx, s.proofs.reader(LogOf(s.store, tenant), tenant), index, size)
}

// ConsistencyProof proves that the tree of size from of tenant's log is a
// prefix of its tree of size to.
func (s *Service) ConsistencyProof(ctx context.Context, tenant string, from, to uint64) ([][]byte, error) {
	if err := s.logRange(ctx, tenant, from, to, "consistency"); err != nil {
		return nil, err
	}
	return tlog.ConsistencyProof(ctx, s.proofs.reader(LogOf(s.store, tenant), tenant), from, to)
}

// LogEntryView is one entry of the caller's tenant's log as the caller
// sees it: the entries it may read (see entryReader) in full; every other
// entry only as the hash of the leaf (proof material).
type LogEntryView struct {
	Index    uint64      `json:"index"`
	Leaf     string      `json:"leaf,omitempty"` // base64 of the exact leaf bytes
	LeafHash string      `json:"leaf_hash"`
	Entry    *tlog.Entry `json:"entry,omitempty"`
}

// MaxLogEntries bounds one entries page.
const MaxLogEntries = 1000

// LogEntries returns the entries in [start, end) of the caller's tenant's
// log as the caller may see them.
func (s *Service) LogEntries(ctx context.Context, c *Caller, start, end uint64) ([]LogEntryView, error) {
	if end <= start {
		return nil, invalid("end", "end must be greater than start")
	}
	if end-start > MaxLogEntries {
		end = start + MaxLogEntries
	}
	leaves, err := s.store.Leaves(ctx, c.Tenant(), start, end)
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
