package custody

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/custody-mem/custody/tlog"
)

// VerifyOptions configure Verify.
type VerifyOptions struct {
	// Checkpoints are signed checkpoints kept outside the database (the
	// server's copy, a user's saved one); the log must be consistent with
	// each, so a database rolled back to an older copy fails.
	Checkpoints [][]byte
	// Progress, if set, is told how many leaves are done out of the total.
	Progress func(done, total uint64)
	// RecordsOnly leaves out the structures the store derives from the
	// records for speed (head flags, lineage edges, text indexes): what
	// Reindex checks before it rebuilds them from the records.
	RecordsOnly bool
}

// VerifyReport says what Verify checked. Entries and Checkpoints are
// summed over the tenants' logs; Logs has each log on its own.
type VerifyReport struct {
	Entries     uint64
	Records     int
	Principals  int
	Checkpoints int
	Logs        []LogReport
	// Legacy is the size of the log all tenants once shared, rebuilt from
	// their logs (see LegacyLog); 0 when the store never had one.
	Legacy uint64
	// Uncovered names what the log does not cover, so verify could not
	// check it (a principal logged before its token hash was): not a
	// difference, but worth restating.
	Uncovered []string
}

// Difference is the first disagreement Verify found. Derived says it is
// in a structure the store derives from the records for speed, with the
// records themselves matching the log: Reindex rebuilds it.
type Difference struct {
	What    string
	Derived bool
	// Tenant is the tenant whose log differs, when the difference is in
	// one tenant's log (its leaves, nodes or checkpoints).
	Tenant string
}

func (d *Difference) Error() string {
	if d.Tenant != "" {
		return "verify: " + d.Tenant + "'s log: " + d.What
	}
	return "verify: " + d.What
}

func differ(format string, args ...any) error {
	return &Difference{What: fmt.Sprintf(format, args...)}
}

func differDerived(format string, args ...any) error {
	return &Difference{What: fmt.Sprintf(format, args...), Derived: true}
}

// expected is a record's state as the log says it should be.
type expected struct {
	fields   map[string]string
	state    string
	bodyHash []byte
	index    uint64
}

// Verify recomputes the Merkle tree from the stored leaves, checks every
// entry's signature against the principal keys the log itself announced,
// checks the stored checkpoints and those given, replays the log into the
// expected state of every record, and compares it with the store. It
// returns a *Difference naming the first disagreement, with the report of
// what it checked: each tenant's log is checked on its own (Logs), and the
// records and principals are compared once every log verified.
//
// It reads the whole store in one read transaction (Store.View), so the
// log it replays and the records it compares are one state: a server may
// write meanwhile, and what it commits after the snapshot is not seen.
func (s *Service) Verify(ctx context.Context, opts VerifyOptions) (*VerifyReport, error) {
	var rep *VerifyReport
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		rep, err = (&verifier{Service: s, store: verifyTx{tx}, oversize: map[string][]uint64{}}).verify(ctx, opts)
		return err
	})
	return rep, err
}

// verifier is one run of Verify. Its store is the run's read transaction,
// which shadows the service's store, so every read of the run, however
// deep, sees the one snapshot.
type verifier struct {
	*Service
	store verifyTx
	// oversize are the entries of each tenant's log longer than
	// MaxLeafBytes, for LogReport.Oversize.
	oversize map[string][]uint64
}

// verifyTx is a read transaction seen as much of a Store as Verify needs:
// its log reads, and View, which runs fn in the same transaction again.
type verifyTx struct{ Tx }

func (r verifyTx) View(_ context.Context, fn func(Tx) error) error { return fn(r.Tx) }

func (s *verifier) verify(ctx context.Context, opts VerifyOptions) (*VerifyReport, error) {
	rep := &VerifyReport{}
	tenants, err := s.store.LogTenants(ctx)
	if err != nil {
		return nil, err
	}
	var total uint64
	sizes := make([]uint64, len(tenants))
	for i, t := range tenants {
		if sizes[i], err = s.store.LogSize(ctx, t); err != nil {
			return nil, err
		}
		total += sizes[i]
	}
	extra, err := s.sortCheckpoints(opts.Checkpoints, tenants)
	if err != nil {
		return nil, err
	}
	keys := map[string]ed25519.PublicKey{ServerActor: s.key.PublicKey()}
	want := map[string]*expected{}
	acc := newAccessLog()
	mems := map[string]*tlog.MemNodes{}
	failed := map[string]bool{}
	var first error
	var done uint64
	for i, t := range tenants {
		lr := LogReport{Tenant: t, Origin: s.LogOrigin(t), Entries: sizes[i]}
		mem, root, err := s.verifyLog(ctx, t, sizes[i], keys, want, acc, func(n uint64) {
			if opts.Progress != nil {
				opts.Progress(done+n, total)
			}
		})
		done += sizes[i]
		lr.Oversize = s.oversize[t]
		if err == nil {
			lr.Root = root
			lr.Checkpoints, err = s.checkCheckpoints(ctx, t, mem, sizes[i], extra[t])
		}
		rep.Entries += sizes[i]
		rep.Checkpoints += lr.Checkpoints
		if err != nil {
			var d *Difference
			if !errors.As(err, &d) {
				return nil, err
			}
			d.Tenant = t
			lr.Problem = d.What
			failed[t] = true
			if first == nil {
				first = d
			}
		}
		mems[t] = mem
		rep.Logs = append(rep.Logs, lr)
	}
	if err := s.checkLegacyLog(ctx, mems, extra[""], rep); err != nil {
		if first == nil {
			first = err
		}
	}
	if first != nil {
		return rep, first
	}
	if err := s.compareState(ctx, keys, want, acc, rep); err != nil {
		return rep, err
	}
	if !opts.RecordsOnly {
		if err := s.compareDerived(ctx); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// replay applies one leaf: its signature must verify under the key of its
// actor as announced earlier in the log (check verifies it, possibly later
// and on another core), and record transitions update the expected state.
func replay(l Leaf, keys map[string]ed25519.PublicKey, want map[string]*expected, acc *accessLog, check func(uint64, *tlog.Entry, ed25519.PublicKey)) error {
	e, err := tlog.ParseLeaf(l.Data)
	if err != nil {
		return differ("log entry %d does not parse: %v", l.Index, err)
	}
	if e.Tenant != l.Tenant {
		return differ("log entry %d: stored tenant %q, entry says %q", l.Index, l.Tenant, e.Tenant)
	}
	pub, ok := keys[e.Actor]
	if !ok {
		return differ("log entry %d is signed by %q, whom no earlier entry introduced", l.Index, e.Actor)
	}
	if lp := acc.principals[e.Actor]; lp != nil && lp.details[detailStatus] == PrincipalRevoked {
		return differ("log entry %d is signed by %s after its revocation (entry %d)", l.Index, e.Actor, lp.index)
	}
	check(l.Index, e, pub)
	acc.add(l.Index, e)
	switch {
	case principalTransitions[e.Transition]:
		if e.Actor != ServerActor {
			return differ("log entry %d: principal introduced by %s, not the server", l.Index, e.Actor)
		}
		k, err := hex.DecodeString(e.Details["public_key"])
		if err != nil || len(k) != ed25519.PublicKeySize {
			return differ("log entry %d: malformed public key", l.Index)
		}
		keys[e.Tenant+"/"+e.Details["name"]] = k
	case e.Transition == "suspend":
		for _, id := range e.RecordIDs {
			x, ok := want[e.Tenant+"\x00"+id]
			if !ok {
				return differ("log entry %d suspends unknown record %s", l.Index, id)
			}
			x.state, x.index = e.NewState, l.Index
		}
	case e.RecordID != "":
		want[e.Tenant+"\x00"+e.RecordID] = &expected{fields: e.Details, state: e.NewState, bodyHash: e.BodyHash, index: l.Index}
	}
	return nil
}

// sigChecker verifies entry signatures on every core while the log is
// replayed in order, and keeps the failure with the lowest index. The keys
// come from the replay (a principal entry announces one), so only the
// Ed25519 verification, most of verify's cost, runs in parallel.
type sigChecker struct {
	jobs chan sigJob
	wg   sync.WaitGroup
	mu   sync.Mutex
	idx  uint64
	err  error
}

type sigJob struct {
	index uint64
	e     *tlog.Entry
	pub   ed25519.PublicKey
}

func newSigChecker() *sigChecker {
	c := &sigChecker{jobs: make(chan sigJob, 1024)}
	for range runtime.NumCPU() {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			for j := range c.jobs {
				if err := j.e.Verify(j.pub); err != nil {
					c.fail(j.index, differ("log entry %d: signature of %s does not verify: %v", j.index, j.e.Actor, err))
				}
			}
		}()
	}
	return c
}

func (c *sigChecker) check(index uint64, e *tlog.Entry, pub ed25519.PublicKey) {
	c.jobs <- sigJob{index, e, pub}
}

func (c *sigChecker) fail(index uint64, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil || index < c.idx {
		c.idx, c.err = index, err
	}
}

// wait stops the workers and returns the first failure.
func (c *sigChecker) wait() (uint64, error) {
	close(c.jobs)
	c.wg.Wait()
	return c.idx, c.err
}

func (s *verifier) compareState(ctx context.Context, keys map[string]ed25519.PublicKey, want map[string]*expected, acc *accessLog, rep *VerifyReport) error {
	return s.store.View(ctx, func(tx Tx) error {
		seen := 0
		err := tx.ScanRecords(ctx, "", func(r *Record) error {
			x, ok := want[r.Tenant+"\x00"+r.ID]
			if !ok {
				return differ("record %s is in the store but not in the log", r.ID)
			}
			seen++
			if err := compareRecord(r, x); err != nil {
				return err
			}
			if pub, ok := keys[r.Writer]; !ok || len(pub) == 0 {
				return differ("record %s: writer %s is unknown to the log", r.ID, r.Writer)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if seen != len(want) {
			return differ("the log names %d records but the store holds %d (a record row was deleted)", len(want), seen)
		}
		rep.Records = seen
		ps, err := tx.Principals(ctx, "")
		if err != nil {
			return err
		}
		for _, p := range ps {
			if !bytes.Equal(keys[p.ID()], p.PublicKey) {
				return differ("principal %s: stored public key differs from the one the log announced", p.ID())
			}
		}
		rep.Principals = len(ps)
		return s.compareAccess(ctx, tx, acc, rep)
	})
}

// compareDerived checks the structures the store derives from the records
// for speed against the records, which compareState has found to match
// the log.
func (s *verifier) compareDerived(ctx context.Context) error {
	return s.store.View(ctx, func(tx Tx) error {
		if hc, ok := tx.(HeadChecker); ok {
			id, err := hc.MisflaggedHead(ctx)
			if err != nil {
				return err
			}
			if id != "" {
				return differDerived("record %s: its newest-version flag disagrees with its key's versions, so retrieval would return the wrong version", id)
			}
		}
		if ec, ok := tx.(EdgeChecker); ok {
			id, err := ec.MisplacedEdge(ctx)
			if err != nil {
				return err
			}
			if id != "" {
				return differDerived("record %s: its lineage edges disagree with its parents, so a quarantine could miss what was derived from them", id)
			}
		}
		if ic, ok := tx.(IndexChecker); ok {
			id, what, err := ic.MisindexedRecord(ctx)
			if err != nil {
				return err
			}
			if id != "" {
				return differDerived("record %s: %s, so searches or the gate could miss it", id, what)
			}
		}
		return nil
	})
}

func compareRecord(r *Record, x *expected) error {
	parents := make([]string, len(r.Parents))
	for i, p := range r.Parents {
		parents[i] = p.ID + "=" + strconv.FormatFloat(p.Weight, 'g', -1, 64)
	}
	got := map[string]string{
		"owner": r.Owner, "namespace": r.Namespace, "key": r.Key, "class": string(r.Class), "channel": r.Channel,
		"writer": r.Writer, "source_ref": r.SourceRef, "audience": r.Audience, "expires_at": fmtTime(r.ExpiresAt),
		"version": strconv.Itoa(r.Version), "parents": strings.Join(parents, ","), "session": r.Session,
		"erased": strconv.FormatBool(r.Erased), "created_at": fmtTime(&r.CreatedAt),
	}
	for k, v := range got {
		if x.fields[k] != v {
			return differ("record %s: %s is %q in the store but %q in the log", r.ID, k, v, x.fields[k])
		}
	}
	if r.Authority.String() != x.fields["authority"] {
		return differ("record %s: authority is %q in the store but %q in the log", r.ID, r.Authority, x.fields["authority"])
	}
	if string(r.State) != x.state {
		return differ("record %s: state is %q in the store but %q in the log", r.ID, r.State, x.state)
	}
	if r.LogIndex != x.index {
		return differ("record %s: log index is %d in the store but its last entry is %d", r.ID, r.LogIndex, x.index)
	}
	if !r.Erased && !bytes.Equal(BodyHash(r.Salt, r.Body), x.bodyHash) {
		return differ("record %s: body or its salt does not match the hash in the log", r.ID)
	}
	if got, want := metadataCommitment(r), x.fields[detailMetadata]; got != want {
		return differ("record %s: its metadata does not match the commitment in the log", r.ID)
	}
	if r.Erased && (r.Body != "" || len(r.Salt) > 0) {
		return differ("record %s: erased but still holds a body or its salt", r.ID)
	}
	if r.Erased && len(r.Metadata) > 0 {
		return differ("record %s: erased but still holds metadata", r.ID)
	}
	return nil
}

// ReadCheckpointFile reads a checkpoint kept outside the store; a missing
// file is no checkpoint.
func ReadCheckpointFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return b, err
}
