package postgres

import (
	"context"
	"errors"
	"math/bits"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/tlog"
	"github.com/jackc/pgx/v5"
	"github.com/transparency-dev/merkle/compact"
)

// What a write knows of its tenant once it holds the tenant's lock.
//
// Every write reads its tenant's policy, open pauses and log border (the
// log's size and the nodes an append reads), and only writers holding the
// tenant's lock change them. So the statement that takes the lock is sent
// with the three reads after it, in one round trip (a pipeline: each
// statement starts, and takes its snapshot, after the one before it
// ended, so the reads see everything committed before the lock was
// granted); and the batch keeps the result, changing it as its own writes
// change the rows: an append moves the border, a new policy replaces the
// policy, a pause makes the pauses be read again. A write rolled back to
// its savepoint takes its changes to this state with it (writer.go).

// tenantState is one tenant's policy, unresolved pauses and log border
// as the transaction sees them. A value is never changed once made: a
// change makes a new one, so that a batch can keep the state from before
// a write by copying the map.
type tenantState struct {
	policy      []byte
	policyFound bool
	// pauses are the tenant's pauses not resumed, by id; known is false
	// after the transaction changed one (they are read again).
	pauses      []*custody.Pause
	pausesKnown bool
	size        uint64
	// border holds the roots of the perfect subtrees covering [0, size).
	border map[compact.NodeID][]byte
}

// Nodes reads border nodes (tlog.NodeReader).
func (s *tenantState) Nodes(_ context.Context, ids []compact.NodeID) ([][]byte, error) {
	return tlog.InOrder(ids, s.border)
}

// lockAndLoad sends the statement taking the tenant's lock (lockSQL with
// args; got reports whether a try succeeded) with the reads of the
// tenant's state after it, and returns the state; a nil state with a nil
// error means the lock was not granted. When the server keeps a border of
// the tenant's log (borders.go), it reads the log's size instead of the
// border, and the border only if no kept border has that size.
func lockAndLoad(ctx context.Context, tx pgx.Tx, tenant string, bs *borders, then *pipelined, lockSQL string, try bool, args ...any) (*tenantState, error) {
	sizeOnly := bs.knows(tenant)
	b := &pgx.Batch{}
	b.Queue(lockSQL, args...)
	b.Queue(`SELECT text FROM policies WHERE tenant = $1 ORDER BY seq DESC LIMIT 1`, tenant)
	b.Queue(`SELECT `+pauseCols+` FROM pauses WHERE tenant = $1 AND resumed_at IS NULL ORDER BY id COLLATE "C"`, tenant)
	if sizeOnly {
		b.Queue(sizeQuery, tenant)
	} else {
		b.Queue(borderQuery, tenant)
		bs.counted()
	}
	if then != nil {
		b.Queue(then.sql, then.args...)
	}
	br := tx.SendBatch(ctx, b)
	st, err := loadState(br, try, sizeOnly)
	if err == nil && st != nil && then != nil {
		then.done = true
		then.read(br) // its error is the caller's, kept by read
	}
	if cerr := br.Close(); err == nil && cerr != nil {
		return nil, cerr
	}
	if err != nil || st == nil || st.border != nil {
		return st, err
	}
	if k, ok := bs.at(ctx, tenant, st.size); ok {
		st.border = k.nodes
		return st, nil
	}
	// No border of this size is kept (another server appended, or a
	// commit whose answer this one did not get landed): read it.
	rows, err := tx.Query(ctx, borderQuery, tenant)
	if err != nil {
		return nil, err
	}
	bs.counted()
	var nodes []tlog.Node
	if st.size, nodes, err = scanBorder(rows); err != nil {
		return nil, err
	}
	st.border = nodeMap(nodes)
	return st, nil
}

// pipelined is a read sent after the state's in lockAndLoad's round trip.
type pipelined struct {
	sql  string
	args []any
	// read reads its result; done says it was sent and read.
	read func(pgx.BatchResults) error
	done bool
}

// loadState reads the results of lockAndLoad's pipeline: with sizeOnly,
// the log's size without its border.
func loadState(br pgx.BatchResults, try bool, sizeOnly bool) (*tenantState, error) {
	if try {
		got := false
		if err := br.QueryRow().Scan(&got); err != nil {
			return nil, err
		}
		if !got {
			return nil, nil
		}
	} else if _, err := br.Exec(); err != nil {
		return nil, err
	}
	st := &tenantState{pausesKnown: true}
	switch err := br.QueryRow().Scan(&st.policy); {
	case err == nil:
		st.policyFound = true
	case !errors.Is(err, pgx.ErrNoRows):
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	if st.pauses, err = scanPauses(rows); err != nil {
		return nil, err
	}
	if sizeOnly {
		var size int64
		if err := br.QueryRow().Scan(&size); err != nil {
			return nil, err
		}
		st.size = uint64(size)
		return st, nil
	}
	rows, err = br.Query()
	if err != nil {
		return nil, err
	}
	var nodes []tlog.Node
	if st.size, nodes, err = scanBorder(rows); err != nil {
		return nil, err
	}
	st.border = nodeMap(nodes)
	return st, nil
}

// nodeMap is nodes by id.
func nodeMap(nodes []tlog.Node) map[compact.NodeID][]byte {
	m := make(map[compact.NodeID][]byte, len(nodes))
	for _, n := range nodes {
		m[n.ID] = n.Hash
	}
	return m
}

// openAt is the pauses that hold writes at now, as OpenPauses lists them.
func (s *tenantState) openAt(now time.Time) []*custody.Pause {
	var out []*custody.Pause
	for _, p := range s.pauses {
		if p.Active(now) {
			out = append(out, p)
		}
	}
	return out
}

// withPolicy is s after the transaction set the tenant's policy to text.
func (s *tenantState) withPolicy(text []byte) *tenantState {
	n := *s
	n.policy, n.policyFound = text, true
	return &n
}

// withPausesChanged is s after the transaction added or resumed a pause.
func (s *tenantState) withPausesChanged() *tenantState {
	n := *s
	n.pauses, n.pausesKnown = nil, false
	return &n
}

// appended is s after one leaf was appended at s.size, which stored
// nodes: the border of size+1 is made of those and of s's border. It is
// nil (read the border again) should a node be missing.
func (s *tenantState) appended(nodes []tlog.Node) *tenantState {
	n := *s
	n.size = s.size + 1
	n.border = make(map[compact.NodeID][]byte, bits.OnesCount64(n.size))
	for level := uint(0); level < 64; level++ {
		if n.size>>level&1 == 0 {
			continue
		}
		id := compact.NewNodeID(level, n.size>>level-1)
		h, ok := s.border[id]
		for _, nd := range nodes {
			if nd.ID == id {
				h, ok = nd.Hash, true
			}
		}
		if !ok {
			return nil
		}
		n.border[id] = h
	}
	return &n
}
