package postgres

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"

	custody "github.com/custody-mem/custody"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// A batch in one round trip.
//
// A write reads its tenant's policy, open pauses and log border, and the
// versions of its key, before it inserts; each read is a round trip's
// wait. What it would read is known ahead most of the time: this server
// committed the tenant's last writes (the state it left is kept, see
// borders.go) and wrote the key last, or the key is new. So a batch is
// first run ahead: its writes' functions run against that kept state,
// every read answered from it, and their statements are queued behind
// the statement taking the tenant's lock and a check of each thing the
// functions were told (custody_expect, migration 019: the log's size,
// the policy, the open pauses, each key's versions). The whole is sent
// in one pipeline, BEGIN to COMMIT, in one round trip. A check that finds
// something else fails the transaction with SQLSTATE CU001 before any of
// the batch's rows is written; the server rolls it back, forgets what it
// kept, and runs the batch as before, each write reading what it needs.
// Nothing is committed that was decided on a state the rows did not hold,
// and every leaf's tree nodes are computed from the border the check
// confirmed.
//
// A function that reads anything else (a record, a session, a
// principal), writes outside the held-back inserts, touches a second
// tenant or fails, makes the batch run as before, with nothing sent.

// errNotAhead is a read a batch run ahead cannot answer from what it
// knows: the batch runs as before.
var errNotAhead = errors.New("postgres: this write reads the database; it runs with its reads")

// expectCode is the SQLSTATE custody_expect raises.
const expectCode = "CU001"

// mispredicted reports whether err is a check of a batch run ahead that
// found the rows changed.
func mispredicted(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == expectCode
}

// aheadTx is the transaction a batch runs ahead in: it holds back every
// statement to send (laterExec), and fails every read with errNotAhead.
type aheadTx struct {
	pending pgx.Batch
}

var _ pgx.Tx = (*aheadTx)(nil)

func (t *aheadTx) execLater(sql string, args ...any) { t.pending.Queue(sql, args...) }

func (t *aheadTx) Exec(context.Context, string, ...any) (pgconn.CommandTag, error) {
	return pgconn.CommandTag{}, errNotAhead
}
func (t *aheadTx) Query(context.Context, string, ...any) (pgx.Rows, error) { return nil, errNotAhead }
func (t *aheadTx) QueryRow(context.Context, string, ...any) pgx.Row        { return errRow{errNotAhead} }
func (t *aheadTx) SendBatch(context.Context, *pgx.Batch) pgx.BatchResults {
	return &afterPending{err: errNotAhead, pending: 1}
}
func (t *aheadTx) CopyFrom(context.Context, pgx.Identifier, []string, pgx.CopyFromSource) (int64, error) {
	return 0, errNotAhead
}
func (t *aheadTx) Prepare(context.Context, string, string) (*pgconn.StatementDescription, error) {
	return nil, errNotAhead
}
func (t *aheadTx) Begin(context.Context) (pgx.Tx, error) { return nil, errNotAhead }
func (t *aheadTx) Commit(context.Context) error          { return errNotAhead }
func (t *aheadTx) Rollback(context.Context) error        { return nil }
func (t *aheadTx) LargeObjects() pgx.LargeObjects        { return pgx.LargeObjects{} }
func (t *aheadTx) Conn() *pgx.Conn                       { return nil }

// aheadRun is what a batch run ahead knows: the one tenant it locked and
// the keys it predicted.
type aheadRun struct {
	s      *Store
	tx     *aheadTx
	tenant string
	keys   []keyRef
	// release ends the batch's claim on its tenant's kept state.
	release func()
}

// The statements a batch run ahead sends after its lock: the tenant's
// log size, policy (the digest stored with it, migration 022) and open
// pauses, and a key's versions, each as it expects them.
const (
	expectTenantSQL = `SELECT custody_expect(
 (SELECT COALESCE(MAX(idx) + 1, 0) FROM log_leaves WHERE tenant = $1) = $2::bigint
 AND (SELECT digest FROM policies WHERE tenant = $1 ORDER BY seq DESC LIMIT 1) IS NOT DISTINCT FROM $3::bytea
 AND (SELECT COALESCE(array_agg(id ORDER BY id COLLATE "C"), '{}') FROM pauses WHERE tenant = $1 AND resumed_at IS NULL) = $4::text[],
 'the tenant''s log, policy or pauses')`
	expectKeySQL = `SELECT custody_expect(
 (SELECT r.id FROM records r WHERE r.tenant = $1 AND r.owner = $2 AND r.namespace = $3 AND r.key = $4 AND r.state = 'admitted'
   ORDER BY r.version DESC LIMIT 1) IS NOT DISTINCT FROM $5::text
 AND (SELECT COALESCE(MAX(version), 0) FROM records WHERE tenant = $1 AND owner = $2 AND namespace = $3 AND key = $4) = $6::bigint,
 'the versions of a key')`
)

// lockAhead takes tenant's lock in a batch run ahead: the statement
// taking it and the check of the state kept for it are queued, and the
// state is the batch's. No state kept, or a second tenant, and the batch
// runs as before.
func (l *lockedTx) lockAhead(ctx context.Context, tenant string) error {
	a := l.ahead
	if tenant == "" || a.tenant != "" || !storable(tenant) {
		return errNotAhead
	}
	st, release := a.s.borders.claim(ctx, tenant)
	if st == nil {
		return errNotAhead
	}
	a.tenant, a.release = tenant, release
	var policy []byte
	if st.policyFound {
		h := sha256.Sum256(st.policy)
		policy = h[:]
	}
	pauses := make([]string, len(st.pauses))
	for i, p := range st.pauses {
		pauses[i] = p.ID
	}
	a.tx.execLater(`SELECT pg_advisory_xact_lock_shared($1), pg_advisory_xact_lock($2, hashtext($3))`, writeLock, tenantLockSpace, tenant)
	a.tx.execLater(expectTenantSQL, tenant, int64(st.size), policy, pauses)
	l.states[tenant] = st
	return nil
}

// keyVersions answers KeyVersions in a batch run ahead: what this server
// knows of the key (nothing: a new key), checked in the round trip.
func (a *aheadRun) keyVersions(tenant, owner, namespace, key string) (string, int, error) {
	if !storable(owner, namespace, key) {
		return "", 0, errNotAhead
	}
	k := keyRef{tenant, owner, namespace, key}
	v, _ := a.s.keys.get(k)
	var cur *string
	if v.Current != "" {
		cur = &v.Current
	}
	a.tx.execLater(expectKeySQL, tenant, owner, namespace, key, cur, int64(v.Max))
	a.keys = append(a.keys, k)
	return v.Current, v.Max, nil
}

// aheadResult is what became of a batch run ahead.
type aheadResult int

const (
	aheadNot  aheadResult = iota // not sent, or rolled back: run the batch as before
	aheadDone                    // committed: every write of the batch is answered
	aheadLost                    // the connection failed: every write fails
)

// ahead runs the batch ahead (see above) on its connection.
func (b *batchRun) ahead() aheadResult {
	if b.s.noAhead {
		return aheadNot
	}
	for _, w := range b.batch {
		if w.ctx.Err() != nil {
			return aheadNot
		}
	}
	a := &aheadRun{s: b.s, tx: &aheadTx{}}
	expects := map[int64]bool{}
	for _, w := range b.batch {
		if v, ok := custody.ExpectedPrincipals(w.ctx); ok && !expects[v] {
			expects[v] = true
			a.tx.execLater(expectPrincipalsSQL, v)
		}
	}
	checks := a.tx.pending.Len()
	defer func() {
		if a.release != nil {
			a.release()
		}
	}()
	locks, states := map[string]bool{}, map[string]*tenantState{}
	lt := &lockedTx{t: &txn{tx: a.tx}, locks: locks, states: states, borders: &b.s.borders, keys: &b.s.keys, ahead: a}
	for _, w := range b.batch {
		if err := runFn(w.fn, lt); err != nil || lt.err != nil {
			b.s.aheadDeclined.Add(1)
			return aheadNot
		}
	}
	switch {
	case a.tx.pending.Len() == 0: // the writes read and wrote nothing
		return aheadDone
	case a.tx.pending.Len() == checks: // nothing but the principals to check
		return aheadNot
	}
	if states[a.tenant] == nil {
		b.s.aheadDeclined.Add(1)
		return aheadNot
	}
	all := &pgx.Batch{}
	all.Queue(beginSQL)
	for _, q := range a.tx.pending.QueuedQueries {
		all.Queue(q.SQL, q.Arguments...)
	}
	all.Queue("COMMIT")
	// No flight is announced (borders.committing): the batch does not
	// hold the lock yet, and a batch of this server that does could wait
	// for that flight while this one waits for its lock. Batches run
	// ahead wait for each other by their claims.
	err := sendAll(b.ctx, b.tx.c, all)
	b.s.borders.landed(a.tenant, states[a.tenant], err == nil)
	switch {
	case err == nil:
		b.ran = len(b.batch)
		b.s.aheadApplied.Add(int64(len(b.batch)))
		b.s.aheadBatches.Add(1)
		return aheadDone
	case connError(err) || b.tx.c.Conn().IsClosed():
		b.s.fail(b.errs, err)
		b.s.borders.forget()
		return aheadLost
	}
	// A check found the rows changed (another server wrote, a commit's
	// answer was lost), or a statement failed: nothing of the batch is
	// written. What the batch was told is forgotten, and it runs again
	// reading it.
	for _, k := range a.keys {
		b.s.keys.forget(k)
	}
	if _, rerr := b.tx.c.Exec(b.ctx, "ROLLBACK"); rerr != nil {
		b.s.fail(b.errs, fmt.Errorf("rolling back a batch run ahead: %w", rerr))
		b.s.borders.forget()
		return aheadLost
	}
	if mispredicted(err) {
		b.s.aheadMissed.Add(1)
	} else {
		b.s.aheadFailed.Add(1)
	}
	return aheadNot
}

// sendAll sends b, which ends with COMMIT, in one round trip, and returns
// the first error of its statements or of the commit.
func sendAll(ctx context.Context, c interface {
	SendBatch(context.Context, *pgx.Batch) pgx.BatchResults
}, b *pgx.Batch) error {
	br := c.SendBatch(ctx, b)
	var err error
	for i := 0; i < b.Len()-1 && err == nil; i++ {
		_, err = br.Exec()
	}
	if err == nil {
		var tag pgconn.CommandTag
		if tag, err = br.Exec(); err == nil && tag.String() == "ROLLBACK" {
			err = pgx.ErrTxCommitRollback
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return err
}

// AheadStats counts the writes applied in one round trip and their
// batches, and the batches that could not be (declined: a write read
// something else; missed: a check found the rows changed; failed: a
// statement failed), for the tests and the benchmarks.
type AheadStats struct {
	Applied, Batches, Declined, Missed, Failed int64
}

// AheadStats reports the store's counters since it opened.
func (s *Store) AheadStats() AheadStats {
	return AheadStats{Applied: s.aheadApplied.Load(), Batches: s.aheadBatches.Load(), Declined: s.aheadDeclined.Load(), Missed: s.aheadMissed.Load(), Failed: s.aheadFailed.Load()}
}
