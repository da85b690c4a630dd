package custody

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"iter"
	"slices"

	"github.com/custody-mem/custody/tlog"
	"github.com/transparency-dev/merkle/compact"
)

// The checks of each tenant's log on its own, and of the log all tenants
// once shared (legacy.go): Verify runs them before it compares the records.

// verifyLog recomputes tenant's tree from its leaves, replaying each into
// the expected state, and checks the stored nodes against it.
func (s *verifier) verifyLog(ctx context.Context, tenant string, size uint64, keys map[string]ed25519.PublicKey, want map[string]*expected, acc *accessLog, progress func(uint64)) (*tlog.MemNodes, []byte, error) {
	sigs := newSigChecker()
	var replayErr error
	var replayIdx uint64
	leaves := func(yield func(uint64, []byte) bool) {
		const page = 5000
		for start := uint64(0); start < size; start += page {
			ls, err := s.store.Leaves(ctx, tenant, start, min(start+page, size))
			if err != nil {
				replayErr = err
				return
			}
			for _, l := range ls {
				if l.Tenant != tenant {
					replayErr, replayIdx = differ("log entry %d is stored as %s's, in %s's log", l.Index, l.Tenant, tenant), l.Index
					return
				}
				if len(l.Data) > MaxLeafBytes && len(s.oversize[tenant]) < maxOversizeNamed {
					s.oversize[tenant] = append(s.oversize[tenant], l.Index)
				}
				if replayErr = replay(l, keys, want, acc, sigs.check); replayErr != nil {
					replayIdx = l.Index
					return
				}
				if !yield(l.Index, l.Data) {
					return
				}
			}
			progress(min(start+page, size))
		}
	}
	mem, n, root, err := tlog.Rebuild(iter.Seq2[uint64, []byte](leaves), nil)
	// The first difference in log order wins, whether a signature or the replay.
	if sigIdx, sigErr := sigs.wait(); sigErr != nil && (replayErr == nil || sigIdx < replayIdx) {
		return mem, nil, sigErr
	}
	if replayErr != nil {
		return mem, nil, replayErr
	}
	if err != nil {
		return mem, nil, differ("log leaves: %v", err)
	}
	if n != size {
		return mem, nil, differ("log has %d leaves but its indexes stop at %d (a leaf row was deleted)", size, n)
	}
	if err := s.compareNodes(ctx, tenant, mem, size); err != nil {
		return mem, nil, err
	}
	return mem, root, nil
}

// LogReport is what Verify found of one tenant's log.
type LogReport struct {
	Tenant      string `json:"tenant"`
	Origin      string `json:"origin"`
	Entries     uint64 `json:"entries"`
	Root        []byte `json:"root,omitempty"` // recomputed from the leaves; nil when Problem is set
	Checkpoints int    `json:"checkpoints"`
	Problem     string `json:"problem,omitempty"` // the difference found in this log
	// Oversize lists the first entries longer than MaxLeafBytes (at most
	// maxOversizeNamed): they are in the tree and verify, but no C2SP
	// entry bundle can hold them (leaf_limits.go).
	Oversize []uint64 `json:"oversize,omitempty"`
}

// maxOversizeNamed bounds the oversize entries a LogReport lists.
const maxOversizeNamed = 20

// sortCheckpoints sorts the checkpoints kept outside the store (each a
// file of one or more notes) by the tenant whose log they are of; "" for
// those of the old shared log or of no log of this store.
func (s *verifier) sortCheckpoints(files [][]byte, tenants []string) (map[string][][]byte, error) {
	out := map[string][][]byte{}
	for _, f := range files {
		for _, n := range SplitNotes(f) {
			t, _ := s.tenantOf(noteOrigin(n))
			out[t] = append(out[t], n)
		}
	}
	for t := range out {
		if t != "" && !slices.Contains(tenants, t) {
			return nil, differ("a checkpoint kept outside the store is of %s's log, which the store does not hold (the store was rolled back or truncated)", t)
		}
	}
	return out, nil
}

// checkLegacyLog rebuilds the old shared log from the tenants' recomputed
// trees and checks its latest stored checkpoint and those given.
func (s *verifier) checkLegacyLog(ctx context.Context, mems map[string]*tlog.MemNodes, extra [][]byte, rep *VerifyReport) error {
	var notes [][]byte
	if ll, ok := s.store.Tx.(LegacyLog); ok {
		_, msg, err := ll.LegacyCheckpoint(ctx)
		if err == nil {
			notes = append(notes, msg)
		} else if !errors.Is(err, ErrNotFound) {
			return err
		}
	}
	mem, size, err := legacyTree(ctx, s.store.Tx, func(t string) tlog.NodeReader {
		if m := mems[t]; m != nil {
			return m
		}
		return tlog.NewMemNodes()
	})
	if err != nil {
		var d *Difference
		if errors.As(err, &d) {
			return err
		}
		return differ("the old shared log: %v", err)
	}
	rep.Legacy = size
	for _, msg := range append(notes, extra...) {
		if _, err := s.checkLegacy(ctx, mem, size, msg); err != nil {
			return differ("%v", err)
		}
		rep.Checkpoints++
	}
	return nil
}

// compareNodes checks every stored perfect-subtree node against the
// recomputed tree.
func (s *verifier) compareNodes(ctx context.Context, tenant string, mem *tlog.MemNodes, size uint64) error {
	var ids []compact.NodeID
	flush := func() error {
		if len(ids) == 0 {
			return nil
		}
		got, err := s.store.Nodes(ctx, tenant, ids)
		if err != nil {
			return differ("tree nodes: %v", err)
		}
		wantHashes, err := mem.Nodes(ctx, ids)
		if err != nil {
			return err
		}
		for i := range ids {
			if !bytes.Equal(got[i], wantHashes[i]) {
				return differ("tree node level %d index %d differs from the one recomputed from the leaves", ids[i].Level, ids[i].Index)
			}
		}
		ids = ids[:0]
		return nil
	}
	for level := uint(0); size>>level > 0; level++ {
		for i := uint64(0); i < size>>level; i++ {
			ids = append(ids, compact.NewNodeID(level, i))
			if len(ids) == 500 {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
	return flush()
}

// checkCheckpoints checks tenant's latest stored checkpoint and those
// given against its recomputed tree, and returns how many it checked.
func (s *verifier) checkCheckpoints(ctx context.Context, tenant string, mem *tlog.MemNodes, size uint64, extra [][]byte) (int, error) {
	var notes [][]byte
	if _, msg, err := s.store.LatestCheckpoint(ctx, tenant); err == nil {
		notes = append(notes, msg)
	} else if !errors.Is(err, ErrNotFound) {
		return 0, err
	}
	stored := len(notes)
	notes = append(notes, extra...)
	for i, msg := range notes {
		what := "the latest stored checkpoint"
		if i >= stored {
			what = "a checkpoint kept outside the store"
		}
		cp, err := s.OpenCheckpoint(tenant, msg)
		if err != nil {
			return i, differ("%s does not verify: %v", what, err)
		}
		if cp.Size > size {
			return i, differ("%s covers %d entries but the log has only %d (the store was rolled back or truncated)", what, cp.Size, size)
		}
		root, err := tlog.RootHash(ctx, mem, cp.Size)
		if err != nil {
			return i, err
		}
		if !bytes.Equal(root, cp.Root) {
			return i, differ("%s (size %d) has a root that the log's leaves do not produce (history was rewritten)", what, cp.Size)
		}
	}
	return len(notes), nil
}
