package custody

import (
	"context"
	"time"
)

// ImpactTx is what the impact of a record needs of a transaction: which
// sessions' reads returned which records (compactly: one row per session
// and record, with the first and last time and a count, never a body), and
// which gate decisions cited a record or traced an argument value to it.
// Both are indexes kept beside the log for the incident path; the reads
// are bounded by the read retention (Options.ReadRetention).
type ImpactTx interface {
	// RecordReads notes that a read of session at at returned ids, by the
	// retrieval via: a new row per record the session had not read, or the
	// row's last time, count and vias updated. An id given twice counts
	// once.
	RecordReads(ctx context.Context, tenant, session string, ids []string, via ReadVia, at time.Time) error
	// ReadsOf lists the read rows of the tenant's records ids last read at
	// or after since, in any order.
	ReadsOf(ctx context.Context, tenant string, ids []string, since time.Time) ([]SessionRead, error)
	// PruneReads deletes the read rows, of every tenant, last read before
	// before, and says how many it deleted.
	PruneReads(ctx context.Context, before time.Time) (int64, error)
	// InsertGateRefs stores what one gate decision relied on.
	InsertGateRefs(ctx context.Context, refs []GateRef) error
	// GateRefsOf lists the gate references of the tenant's records ids, in
	// any order.
	GateRefsOf(ctx context.Context, tenant string, ids []string) ([]GateRef, error)
}

// ReadVia is the set of retrievals that returned a record to a session.
type ReadVia int

// The retrievals.
const (
	ReadGet ReadVia = 1 << iota
	ReadList
	ReadSearch
)

// Names lists the retrievals in v: "get", "list", "search".
func (v ReadVia) Names() []string {
	out := []string{}
	for _, n := range []struct {
		bit  ReadVia
		name string
	}{{ReadGet, "get"}, {ReadList, "list"}, {ReadSearch, "search"}} {
		if v&n.bit != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

// SessionRead is what the reads of one session returned of one record.
type SessionRead struct {
	Tenant  string
	Session string
	Record  string
	Via     ReadVia
	Reads   int64
	FirstAt time.Time
	LastAt  time.Time
}

// How a gate decision relied on a record.
const (
	GateCited  = "justification" // named among the justifying memories
	GateTraced = "traced"        // an argument value was found in it
)

// GateRef is one record a gate decision relied on, with the decision.
type GateRef struct {
	Tenant   string    `json:"-"`
	Record   string    `json:"record"`
	LogIndex uint64    `json:"log_index"`
	How      string    `json:"how" enum:"justification,traced"`
	Action   string    `json:"action"`
	Decision string    `json:"decision" enum:"allow,confirm,deny"`
	Subject  string    `json:"subject"`
	Session  string    `json:"session,omitempty"`
	At       time.Time `json:"at"`
}
