package custody

import (
	"bytes"
	"context"
	"fmt"

	"github.com/custody-mem/custody/tlog"
	"github.com/transparency-dev/merkle/compact"
)

// The log all tenants once shared.
//
// Stores older than one log per tenant had one tree for every tenant. Their
// migration re-sequenced it (see LegacyLog): tenant T's leaves, in order
// and byte for byte, are T's log now, and the store keeps which tenant each
// old leaf belonged to. The old tree is therefore the tree of the tenants'
// leaves taken in that order, and a checkpoint signed of it before the
// migration (the checkpoint file, a client's pin) still verifies: its leaves
// are rebuilt from the tenants' logs, never stored twice. Re-sequencing
// rather than freezing the old tree keeps every record's and principal's log
// index an index in its own tenant's log, so a caller proves any record it
// is shown against its tenant's checkpoint alone.

// legacyTree rebuilds the old shared log from the tenants' leaf hashes as
// nodes reads them (a store's tree nodes, or the trees verify recomputed).
// It returns nil when the store has no old log.
func legacyTree(ctx context.Context, tx Tx, nodes func(tenant string) tlog.NodeReader) (*tlog.MemNodes, uint64, error) {
	ll, ok := tx.(LegacyLog)
	if !ok {
		return nil, 0, nil
	}
	type pos struct {
		tenant string
		index  uint64
	}
	var order []pos
	next := map[string]uint64{}
	err := ll.LegacyTenants(ctx, func(i uint64, tenant string) error {
		if i != uint64(len(order)) {
			return differ("the old shared log's order skips from leaf %d to %d", len(order), i)
		}
		order = append(order, pos{tenant, next[tenant]})
		next[tenant]++
		return nil
	})
	if err != nil || len(order) == 0 {
		return nil, 0, err
	}
	byTenant := map[string][][]byte{}
	for t, n := range next {
		ids := make([]compact.NodeID, n)
		for i := range ids {
			ids[i] = compact.NewNodeID(0, uint64(i))
		}
		var hs [][]byte
		for start := 0; start < len(ids); start += 1000 {
			got, err := nodes(t).Nodes(ctx, ids[start:min(start+1000, len(ids))])
			if err != nil {
				return nil, 0, differ("the old shared log names %d leaves of %s, which its log does not hold: %v", n, t, err)
			}
			hs = append(hs, got...)
		}
		byTenant[t] = hs
	}
	hashes := make([][]byte, len(order))
	for i, p := range order {
		hashes[i] = byTenant[p.tenant][p.index]
	}
	mem := tlog.NewMemNodes()
	ns, _, err := tlog.AppendMany(ctx, mem, 0, hashes)
	if err != nil {
		return nil, 0, err
	}
	mem.Put(ns)
	return mem, uint64(len(order)), nil
}

// checkLegacy checks msg, a checkpoint of the old shared log (signed by
// this server's key under the origin it names), against the old log as
// mem holds it (size leaves). An error wraps ErrRolledBack.
func (s *Service) checkLegacy(ctx context.Context, mem *tlog.MemNodes, size uint64, msg []byte) (tlog.Checkpoint, error) {
	origin := noteOrigin(msg)
	_, v, err := tlog.NewNoteSigner(origin, s.key.SigningKey())
	if err != nil {
		return tlog.Checkpoint{}, fmt.Errorf("%w: a checkpoint of log %q: %w", ErrRolledBack, origin, err)
	}
	cp, err := tlog.OpenCheckpoint(msg, origin, v)
	if err != nil {
		return cp, fmt.Errorf("%w: the checkpoint of log %q does not verify under this server's key: %w", ErrRolledBack, origin, err)
	}
	if mem == nil {
		return cp, fmt.Errorf("%w: the checkpoint of log %q is of no log of this store (its logs are %s/<tenant>)", ErrRolledBack, origin, s.opts.LogOrigin)
	}
	if cp.Size > size {
		return cp, fmt.Errorf("%w: the checkpoint of the old shared log %q covers %d entries but the store holds only %d of it (the store was rolled back or truncated)", ErrRolledBack, origin, cp.Size, size)
	}
	root, err := tlog.RootHash(ctx, mem, cp.Size)
	if err != nil {
		return cp, err
	}
	if !bytes.Equal(root, cp.Root) {
		return cp, fmt.Errorf("%w: at size %d the old shared log %q, rebuilt from the tenants' logs, has another root than its checkpoint (history was rewritten)", ErrRolledBack, cp.Size, origin)
	}
	return cp, nil
}

// noteOrigin is the first line of a signed note: a checkpoint's origin.
func noteOrigin(msg []byte) string {
	line, _, _ := bytes.Cut(msg, []byte("\n"))
	return string(line)
}

// SplitNotes splits a file of signed notes written one after another (a
// checkpoint file holds one per tenant) into the notes. A note is its text,
// a blank line, and its signature lines, each starting with "— ".
func SplitNotes(b []byte) [][]byte {
	var out [][]byte
	start, inSigs := 0, false
	for off := 0; off < len(b); {
		end := bytes.IndexByte(b[off:], '\n')
		if end < 0 {
			end = len(b)
		} else {
			end += off + 1
		}
		line := b[off:end]
		switch {
		case inSigs && !bytes.HasPrefix(line, []byte("— ")):
			out = append(out, b[start:off])
			start, inSigs = off, false
		case !inSigs && off > start && bytes.Equal(line, []byte("\n")):
			inSigs = true
		}
		off = end
	}
	if start < len(b) {
		out = append(out, b[start:])
	}
	return out
}
