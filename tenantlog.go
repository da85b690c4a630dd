package custody

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"

	"github.com/custody-mem/custody/tlog"
	"github.com/transparency-dev/merkle/compact"
)

// One log per tenant.
//
// Each tenant's entries form their own RFC 6962 tree, with their own size,
// leaves, tree nodes and signed checkpoints, so that writes of different
// tenants never wait on one another (PostgreSQL takes a lock per tenant)
// and a tenant's auditor sees its own tree only. Each tree has its own
// origin, the first line of its checkpoints: the installation's log name
// (Options.LogOrigin, kept in the store under MetaLogName), "/" and the
// tenant, e.g. custody.local/i-3f9a0c1b2d4e5f60/acme. The log name is unique
// per installation, so that a witness or monitor never takes two
// installations' logs for one.

// MetaLogName is the store setting (MetaStore) that holds the
// installation's log name, from which every tenant's log origin derives.
const MetaLogName = "log_name"

// TenantLog is one tenant's log as a LogReader reads it: what a tile
// server, a witness feeder or a proof needs (tlog.NodeReader included).
type TenantLog struct {
	r      LogReader
	Tenant string
}

// LogOf binds r to the log of tenant.
func LogOf(r LogReader, tenant string) TenantLog { return TenantLog{r: r, Tenant: tenant} }

// Size is the number of entries in the tenant's log.
func (l TenantLog) Size(ctx context.Context) (uint64, error) { return l.r.LogSize(ctx, l.Tenant) }

// Leaves returns the tenant's leaves in [start, end).
func (l TenantLog) Leaves(ctx context.Context, start, end uint64) ([]Leaf, error) {
	return l.r.Leaves(ctx, l.Tenant, start, end)
}

// Nodes reads stored tree nodes of the tenant's tree (tlog.NodeReader);
// level 0 holds the leaf hashes.
func (l TenantLog) Nodes(ctx context.Context, ids []compact.NodeID) ([][]byte, error) {
	return l.r.Nodes(ctx, l.Tenant, ids)
}

// LatestCheckpoint returns the tenant's latest stored checkpoint;
// ErrNotFound if none.
func (l TenantLog) LatestCheckpoint(ctx context.Context) (uint64, []byte, error) {
	return l.r.LatestCheckpoint(ctx, l.Tenant)
}

var _ tlog.NodeReader = TenantLog{}

// LogOriginOf is the origin of tenant's log in the installation whose
// log name is name.
func LogOriginOf(name, tenant string) string { return name + "/" + tenant }

// LogOrigin is the origin of tenant's log on this server.
func (s *Service) LogOrigin(tenant string) string { return LogOriginOf(s.opts.LogOrigin, tenant) }

// LogName is the installation's log name, the prefix of every tenant's
// log origin.
func (s *Service) LogName() string { return s.opts.LogOrigin }

// tenantOf returns the tenant whose log origin is origin, if it is one of
// this server's.
func (s *Service) tenantOf(origin string) (string, bool) {
	t, ok := strings.CutPrefix(origin, s.opts.LogOrigin+"/")
	if !ok || ValidName("tenant", t) != nil {
		return "", false
	}
	return t, true
}

// LogNameResult is what ResolveLogName settled on.
type LogNameResult struct {
	Name string
	// Generated says the name was made now, for a store that had none.
	Generated bool
	// Recorded says the name was stored now (generated or asked for).
	Recorded bool
}

// ResolveLogName returns the log name of the store, recording one in it
// if it has none: requested when given, a newly generated unique one
// otherwise. A store that holds a name keeps it: requesting another is an
// error, since every checkpoint signed so far names the old one. A new
// store (no log entries, nothing migrated) is refused DefaultLogOrigin,
// which every installation would share.
func ResolveLogName(ctx context.Context, st Store, requested string) (LogNameResult, error) {
	have, err := st.Meta(ctx, MetaLogName)
	if err != nil {
		return LogNameResult{}, err
	}
	if have != "" {
		if requested != "" && requested != have {
			return LogNameResult{}, invalid("origin", "the store's log name is %q, not %q: every checkpoint it signed names it, so it cannot change; drop --origin or give that name", have, requested)
		}
		return LogNameResult{Name: have}, nil
	}
	res := LogNameResult{Name: requested, Recorded: true}
	if requested == "" {
		res.Name, res.Generated = NewLogName(), true
	} else if err := ValidLogName(requested); err != nil {
		return LogNameResult{}, err
	} else if requested == DefaultLogOrigin {
		used, err := storeUsed(ctx, st)
		if err != nil {
			return LogNameResult{}, err
		}
		if !used {
			return LogNameResult{}, invalid("origin", "refusing to create a store with the log name %q, which every installation would share (a witness would take their logs for one): drop --origin to have a unique name made, or give one of your own, such as example.com/custody", DefaultLogOrigin)
		}
	}
	got, err := st.SetMeta(ctx, MetaLogName, res.Name)
	if err != nil {
		return LogNameResult{}, err
	}
	if got != res.Name { // another process named it first
		return LogNameResult{Name: got}, nil
	}
	return res, nil
}

// storeUsed reports whether st holds a log already (its own or one it was
// migrated from).
func storeUsed(ctx context.Context, st Store) (bool, error) {
	used := false
	err := st.View(ctx, func(tx Tx) error {
		ts, err := tx.LogTenants(ctx)
		if err != nil || len(ts) > 0 {
			used = len(ts) > 0
			return err
		}
		if ll, ok := tx.(LegacyLog); ok {
			return ll.LegacyTenants(ctx, func(uint64, string) error { used = true; return errStop })
		}
		return nil
	})
	if errors.Is(err, errStop) {
		err = nil
	}
	return used, err
}

var errStop = errors.New("stop")

// NewLogName returns a fresh unique log name: custody.local/i- and 16
// random hex digits.
func NewLogName() string {
	b := make([]byte, 8)
	rand.Read(b)
	return "custody.local/i-" + hex.EncodeToString(b)
}

// ValidLogName checks a log name: a schema-less URL-like string (C2SP
// checkpoint origins) of printable ASCII without spaces or "+".
func ValidLogName(name string) error {
	if name == "" || len(name) > 200 {
		return invalid("origin", "log name %q must be 1 to 200 characters", name)
	}
	for _, c := range name {
		if c <= ' ' || c > '~' || c == '+' {
			return invalid("origin", "log name %q must be printable ASCII without spaces or \"+\" (a schema-less URL such as example.com/custody)", name)
		}
	}
	if strings.Contains(name, "://") || strings.HasSuffix(name, "/") {
		return invalid("origin", "log name %q must be a schema-less URL without a trailing \"/\" (such as example.com/custody)", name)
	}
	return nil
}
