package postgres

import (
	"bytes"
	"context"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/jackc/pgx/v5"
	"github.com/transparency-dev/merkle/compact"
)

// lockedTx is the Tx an Update hands its function: before its first read
// or write of a tenant's rows it takes that tenant's lock (lockTenant), so
// that writes of one tenant run one at a time on every server, as they
// must for the tenant's log and its version numbers, while writes of
// different tenants run side by side. Every method is spelled out, not
// promoted from txn, so that a method added to custody.Tx fails to compile
// here until it says which tenant it touches.
type lockedTx struct {
	t     *txn
	locks map[string]bool
	// noWait: only try locks (a write joining a batch that holds locks).
	noWait bool
	// err is the failure of a lock, kept: see lock.
	err error
	// states is what the batch knows of each tenant it holds the lock
	// of (tenantstate.go).
	states map[string]*tenantState
	// borders are the borders the server last committed (borders.go).
	borders *borders
	// keys are the versions of keys the server last wrote or read, kept
	// up to date with the writes (keycache.go); nil keeps none.
	keys *keyCache
	// ahead is the batch run ahead this Tx answers for (ahead.go), nil
	// for a batch that reads.
	ahead *aheadRun
}

var _ custody.Tx = (*lockedTx)(nil)

func (l *lockedTx) Record(ctx context.Context, tenant, id string) (*custody.Record, error) {
	if err := l.lock(ctx, tenant); err != nil {
		return nil, err
	}
	return l.t.Record(ctx, tenant, id)
}

func (l *lockedTx) Current(ctx context.Context, tenant, owner, namespace, key string) (*custody.Record, error) {
	if err := l.lock(ctx, tenant); err != nil {
		return nil, err
	}
	return l.t.Current(ctx, tenant, owner, namespace, key)
}

func (l *lockedTx) CurrentID(ctx context.Context, tenant, owner, namespace, key string) (string, error) {
	if err := l.lock(ctx, tenant); err != nil {
		return "", err
	}
	return l.t.CurrentID(ctx, tenant, owner, namespace, key)
}

func (l *lockedTx) MaxVersion(ctx context.Context, tenant, owner, namespace, key string) (int, error) {
	if err := l.lock(ctx, tenant); err != nil {
		return 0, err
	}
	return l.t.MaxVersion(ctx, tenant, owner, namespace, key)
}

// KeyVersions is read in the round trip that takes the tenant's lock when
// the write does not hold it yet (a new keyed record's first read).
func (l *lockedTx) KeyVersions(ctx context.Context, tenant, owner, namespace, key string) (cur string, v int, err error) {
	if l.ahead != nil {
		if err := l.lock(ctx, tenant); err != nil {
			return "", 0, err
		}
		cur, v, err = l.ahead.keyVersions(tenant, owner, namespace, key)
		l.err = err // a key it cannot tell: the batch runs with its reads
		return cur, v, err
	}
	defer func() {
		if err == nil && l.keys != nil {
			l.keys.put(keyRef{tenant, owner, namespace, key}, custody.KeyVersions{Current: cur, Max: v})
		}
	}()
	if storable(tenant, owner, namespace, key) {
		var cur string
		var v int
		var err error
		read := &pipelined{sql: keyVersionsQuery, args: []any{tenant, owner, namespace, key},
			read: func(br pgx.BatchResults) error { cur, v, err = scanKeyVersions(br.QueryRow()); return err }}
		if err := l.lockWith(ctx, tenant, read); err != nil {
			return "", 0, err
		}
		if read.done {
			return cur, v, err
		}
	}
	if err := l.lock(ctx, tenant); err != nil {
		return "", 0, err
	}
	return l.t.KeyVersions(ctx, tenant, owner, namespace, key)
}

// KeysVersions is read in the round trip that takes the tenant's lock
// when the write does not hold it yet (a batch's first read).
func (l *lockedTx) KeysVersions(ctx context.Context, tenant, owner string, keys []custody.NamespaceKey) ([]custody.KeyVersions, error) {
	var out []custody.KeyVersions
	var err error
	q, args := keysVersionsQuery(tenant, owner, keys)
	read := &pipelined{sql: q, args: args, read: func(br pgx.BatchResults) error {
		out, err = scanKeysVersions(br.Query())
		return err
	}}
	if err := l.lockWith(ctx, tenant, read); err != nil {
		return nil, err
	}
	if !read.done {
		out, err = l.t.KeysVersions(ctx, tenant, owner, keys)
	}
	if err == nil && l.keys != nil && len(out) == len(keys) {
		for i, k := range keys {
			l.keys.put(keyRef{tenant, owner, k.Namespace, k.Key}, out[i])
		}
	}
	return out, err
}

func (l *lockedTx) Versions(ctx context.Context, tenant, owner, namespace, key string) ([]*custody.Record, error) {
	if err := l.lock(ctx, tenant); err != nil {
		return nil, err
	}
	return l.t.Versions(ctx, tenant, owner, namespace, key)
}

func (l *lockedTx) InsertRecord(ctx context.Context, r *custody.Record) error {
	if err := l.lock(ctx, r.Tenant); err != nil {
		return err
	}
	if err := l.t.InsertRecord(ctx, r); err != nil {
		return err
	}
	if l.keys != nil {
		l.keys.inserted(r)
	}
	return nil
}

func (l *lockedTx) UpdateRecord(ctx context.Context, r *custody.Record) error {
	if err := l.lock(ctx, r.Tenant); err != nil {
		return err
	}
	if l.keys != nil && r.Key != "" {
		l.keys.forget(keyRef{r.Tenant, r.Owner, r.Namespace, r.Key})
	}
	return l.t.UpdateRecord(ctx, r)
}

func (l *lockedTx) Children(ctx context.Context, tenant, id string) ([]string, error) {
	if err := l.lock(ctx, tenant); err != nil {
		return nil, err
	}
	return l.t.Children(ctx, tenant, id)
}

func (l *lockedTx) Descendants(ctx context.Context, tenant, id string) ([]custody.IDState, error) {
	if err := l.lock(ctx, tenant); err != nil {
		return nil, err
	}
	return l.t.Descendants(ctx, tenant, id)
}

func (l *lockedTx) SetStates(ctx context.Context, tenant string, recs []custody.IDState, state custody.State, logIndex uint64, rc *custody.Receipt) error {
	if err := l.lock(ctx, tenant); err != nil {
		return err
	}
	if l.keys != nil && len(recs) > 0 {
		l.keys.clear() // the keys of recs are not known here
	}
	return l.t.SetStates(ctx, tenant, recs, state, logIndex, rc)
}

func (l *lockedTx) InState(ctx context.Context, tenant string, states []custody.State, after string, limit int) ([]*custody.Record, error) {
	if err := l.lock(ctx, tenant); err != nil {
		return nil, err
	}
	return l.t.InState(ctx, tenant, states, after, limit)
}

func (l *lockedTx) Mentioning(ctx context.Context, s custody.Scope, q custody.MentionQuery) ([]*custody.Record, error) {
	if err := l.lock(ctx, s.Tenant); err != nil {
		return nil, err
	}
	return l.t.Mentioning(ctx, s, q)
}

func (l *lockedTx) ScanRecords(ctx context.Context, tenant string, fn func(*custody.Record) error) error {
	if err := l.lock(ctx, tenant); err != nil {
		return err
	}
	return l.t.ScanRecords(ctx, tenant, fn)
}

func (l *lockedTx) InsertPrincipal(ctx context.Context, p *custody.Principal, tokenHash, sealedKey []byte) error {
	if err := l.lock(ctx, p.Tenant); err != nil {
		return err
	}
	return l.t.InsertPrincipal(ctx, p, tokenHash, sealedKey)
}

func (l *lockedTx) Principal(ctx context.Context, tenant, name string) (*custody.Principal, error) {
	if err := l.lock(ctx, tenant); err != nil {
		return nil, err
	}
	return l.t.Principal(ctx, tenant, name)
}

func (l *lockedTx) SealedKey(ctx context.Context, tenant, name string) ([]byte, error) {
	if err := l.lock(ctx, tenant); err != nil {
		return nil, err
	}
	return l.t.SealedKey(ctx, tenant, name)
}

func (l *lockedTx) Principals(ctx context.Context, tenant string) ([]*custody.Principal, error) {
	if err := l.lock(ctx, tenant); err != nil {
		return nil, err
	}
	return l.t.Principals(ctx, tenant)
}

func (l *lockedTx) TokenHash(ctx context.Context, tenant, name string) ([]byte, error) {
	if err := l.lock(ctx, tenant); err != nil {
		return nil, err
	}
	return l.t.TokenHash(ctx, tenant, name)
}

func (l *lockedTx) SetPrincipalLogIndex(ctx context.Context, tenant, name string, index uint64) error {
	if err := l.lock(ctx, tenant); err != nil {
		return err
	}
	return l.t.SetPrincipalLogIndex(ctx, tenant, name, index)
}

func (l *lockedTx) UpdatePrincipal(ctx context.Context, p *custody.Principal, tokenHash, sealedKey []byte) error {
	if err := l.lock(ctx, p.Tenant); err != nil {
		return err
	}
	return l.t.UpdatePrincipal(ctx, p, tokenHash, sealedKey)
}

func (l *lockedTx) InsertPause(ctx context.Context, p *custody.Pause) error {
	if err := l.lock(ctx, p.Tenant); err != nil {
		return err
	}
	if err := l.t.InsertPause(ctx, p); err != nil {
		return err
	}
	l.pausesChanged(p.Tenant)
	return nil
}

func (l *lockedTx) ResumePause(ctx context.Context, p *custody.Pause) error {
	if err := l.lock(ctx, p.Tenant); err != nil {
		return err
	}
	if err := l.t.ResumePause(ctx, p); err != nil {
		return err
	}
	l.pausesChanged(p.Tenant)
	return nil
}

func (l *lockedTx) Pauses(ctx context.Context, tenant string) ([]*custody.Pause, error) {
	if err := l.lock(ctx, tenant); err != nil {
		return nil, err
	}
	return l.t.Pauses(ctx, tenant)
}

func (l *lockedTx) OpenPauses(ctx context.Context, tenant string, now time.Time) ([]*custody.Pause, error) {
	if err := l.lock(ctx, tenant); err != nil {
		return nil, err
	}
	if st := l.states[tenant]; st != nil && st.pausesKnown {
		return st.openAt(now), nil
	}
	return l.t.OpenPauses(ctx, tenant, now)
}

func (l *lockedTx) Policy(ctx context.Context, tenant string) (text []byte, err error) {
	if err := l.lock(ctx, tenant); err != nil {
		return nil, err
	}
	if st := l.states[tenant]; st != nil {
		if !st.policyFound {
			return nil, custody.ErrNotFound
		}
		return bytes.Clone(st.policy), nil
	}
	return l.t.Policy(ctx, tenant)
}

func (l *lockedTx) SetPolicy(ctx context.Context, tenant string, text []byte, actor string, at time.Time) error {
	if err := l.lock(ctx, tenant); err != nil {
		return err
	}
	if err := l.t.SetPolicy(ctx, tenant, text, actor, at); err != nil {
		return err
	}
	if st := l.states[tenant]; st != nil {
		l.states[tenant] = st.withPolicy(bytes.Clone(text))
	}
	return nil
}

func (l *lockedTx) InsertSession(ctx context.Context, s *custody.Session) error {
	if err := l.lock(ctx, s.Tenant); err != nil {
		return err
	}
	return l.t.InsertSession(ctx, s)
}

func (l *lockedTx) Session(ctx context.Context, tenant, id string) (*custody.Session, error) {
	if err := l.lock(ctx, tenant); err != nil {
		return nil, err
	}
	return l.t.Session(ctx, tenant, id)
}

func (l *lockedTx) AddObservation(ctx context.Context, o *custody.Observation) error {
	if err := l.lock(ctx, o.Tenant); err != nil {
		return err
	}
	return l.t.AddObservation(ctx, o)
}

func (l *lockedTx) Observations(ctx context.Context, tenant, session string) ([]*custody.Observation, error) {
	if err := l.lock(ctx, tenant); err != nil {
		return nil, err
	}
	return l.t.Observations(ctx, tenant, session)
}

func (l *lockedTx) ScanSessions(ctx context.Context, fn func(*custody.Session) error) error {
	if err := l.lock(ctx, ""); err != nil {
		return err
	}
	return l.t.ScanSessions(ctx, fn)
}

func (l *lockedTx) ScanObservations(ctx context.Context, fn func(*custody.Observation) error) error {
	if err := l.lock(ctx, ""); err != nil {
		return err
	}
	return l.t.ScanObservations(ctx, fn)
}

func (l *lockedTx) InsertEndorsement(ctx context.Context, e *custody.Endorsement) error {
	if err := l.lock(ctx, e.Tenant); err != nil {
		return err
	}
	return l.t.InsertEndorsement(ctx, e)
}

func (l *lockedTx) Endorsements(ctx context.Context, tenant, session string) ([]*custody.Endorsement, error) {
	if err := l.lock(ctx, tenant); err != nil {
		return nil, err
	}
	return l.t.Endorsements(ctx, tenant, session)
}

func (l *lockedTx) ScanEndorsements(ctx context.Context, fn func(*custody.Endorsement) error) error {
	if err := l.lock(ctx, ""); err != nil {
		return err
	}
	return l.t.ScanEndorsements(ctx, fn)
}

func (l *lockedTx) InsertGrant(ctx context.Context, g *custody.Grant) error {
	if err := l.lock(ctx, g.Tenant); err != nil {
		return err
	}
	return l.t.InsertGrant(ctx, g)
}

func (l *lockedTx) UseGrant(ctx context.Context, tenant, subject, digest string, at time.Time) (bool, error) {
	if err := l.lock(ctx, tenant); err != nil {
		return false, err
	}
	return l.t.UseGrant(ctx, tenant, subject, digest, at)
}

func (l *lockedTx) EraseObservations(ctx context.Context, tenant, sourceRef string) error {
	if err := l.lock(ctx, tenant); err != nil {
		return err
	}
	return l.t.EraseObservations(ctx, tenant, sourceRef)
}

func (l *lockedTx) ScanGrants(ctx context.Context, fn func(*custody.StoredGrant) error) error {
	if err := l.lock(ctx, ""); err != nil {
		return err
	}
	return l.t.ScanGrants(ctx, fn)
}

func (l *lockedTx) Tombstone(ctx context.Context, tenant, id string, state custody.State) error {
	if err := l.lock(ctx, tenant); err != nil {
		return err
	}
	return l.t.Tombstone(ctx, tenant, id, state)
}

func (l *lockedTx) Tombstoned(ctx context.Context, tenant, id string) (bool, error) {
	if err := l.lock(ctx, tenant); err != nil {
		return false, err
	}
	return l.t.Tombstoned(ctx, tenant, id)
}

func (l *lockedTx) Tombstones(ctx context.Context, fn func(tenant, id string, state custody.State) error) error {
	if err := l.lock(ctx, ""); err != nil {
		return err
	}
	return l.t.Tombstones(ctx, fn)
}

func (l *lockedTx) AppendLeaf(ctx context.Context, tenant string, leaf []byte) (uint64, error) {
	if err := l.lock(ctx, tenant); err != nil {
		return 0, err
	}
	st := l.states[tenant]
	if st == nil {
		return l.t.AppendLeaf(ctx, tenant, leaf)
	}
	nodes, err := l.t.appendAt(ctx, tenant, leaf, st.size, st)
	if err != nil {
		return 0, err
	}
	if next := st.appended(nodes); next != nil {
		l.states[tenant] = next
	} else {
		delete(l.states, tenant)
	}
	return st.size, nil
}

// pausesChanged makes the tenant's pauses be read again.
func (l *lockedTx) pausesChanged(tenant string) {
	if st := l.states[tenant]; st != nil {
		l.states[tenant] = st.withPausesChanged()
	}
}

func (l *lockedTx) LogTenants(ctx context.Context) ([]string, error) {
	return l.t.LogTenants(ctx)
}

func (l *lockedTx) LogSize(ctx context.Context, tenant string) (uint64, error) {
	if err := l.lock(ctx, tenant); err != nil {
		return 0, err
	}
	return l.t.LogSize(ctx, tenant)
}

func (l *lockedTx) Leaves(ctx context.Context, tenant string, start, end uint64) ([]custody.Leaf, error) {
	if err := l.lock(ctx, tenant); err != nil {
		return nil, err
	}
	return l.t.Leaves(ctx, tenant, start, end)
}

func (l *lockedTx) Nodes(ctx context.Context, tenant string, ids []compact.NodeID) ([][]byte, error) {
	if err := l.lock(ctx, tenant); err != nil {
		return nil, err
	}
	return l.t.Nodes(ctx, tenant, ids)
}

func (l *lockedTx) LatestCheckpoint(ctx context.Context, tenant string) (uint64, []byte, error) {
	if err := l.lock(ctx, tenant); err != nil {
		return 0, nil, err
	}
	return l.t.LatestCheckpoint(ctx, tenant)
}
