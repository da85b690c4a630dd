package custody

import (
	"context"
	"crypto/ed25519"
	"sync"
	"time"

	"github.com/custody-mem/custody/tlog"
)

// Decide, then apply.
//
// One goroutine of a store writes (the SQLite writer, the PostgreSQL
// group committer), so whatever it computes for a write serializes every
// write. A new record's decision needs only a few facts of the store
// (admitState): with them known, the policy's evaluation, the entry's
// digests and its Ed25519 signature need nothing of the transaction. So
// the caller, on its own goroutine, predicts that state from what the
// writer last saw (hints), decides against it and signs the entry
// (prepare); the writer then reads the state as it always did and compares
// it with the prediction, field by field (admitState.same). Equal, it
// applies the prepared decision and appends the signed entry as it is;
// different in anything (a version of the key committed meanwhile, a new
// policy, a pause, a session's lower floor, a parent's state), it decides
// again there against what it read, as it did before, and signs there.
// Either way the decision is the one the state it is applied on gives,
// and the log entry describes that state.
//
// The entry's time is the instant the decision was made: the caller's
// when it was prepared, the writer's when it was made there.

// prepared is a decision made ahead of its transaction.
type prepared struct {
	st     *admitState // the state predicted
	v      verdict
	salt   []byte             // the record's salt, which entry commits to
	key    ed25519.PrivateKey // the key that signed entry
	entry  *tlog.Entry
	leaf   []byte // entry, signed and encoded
	packed []byte // leaf as the store keeps it (leafPacker), or nil
}

// leafPacker is a store that keeps leaves in a form of its own (SQLite
// packs them): PackLeaf computes it from the leaf alone, so a write
// decided ahead packs its leaf on the caller's goroutine, and the
// store's transaction, a packedAppender, appends it with the leaf.
type leafPacker interface {
	PackLeaf(leaf []byte) []byte
}

type packedAppender interface {
	AppendPackedLeaf(ctx context.Context, tenant string, leaf, packed []byte) (uint64, error)
}

// AppendPackedLeaf appends leaf as packed, if the store's transaction
// takes a packed leaf, and leaf otherwise.
func (t *eventTx) AppendPackedLeaf(ctx context.Context, tenant string, leaf, packed []byte) (uint64, error) {
	if pa, ok := t.Tx.(packedAppender); ok {
		return pa.AppendPackedLeaf(ctx, tenant, leaf, packed)
	}
	return t.Tx.AppendLeaf(ctx, tenant, leaf)
}

// prepare decides r ahead, against the state the hints predict and its
// parents as a read finds them, and signs its entry. It returns nil when
// it cannot predict (a session the writer has not seen, a tenant whose
// policy cannot be loaded, a parent or a key it cannot read): the writer
// then decides alone.
func (s *Service) prepare(ctx context.Context, c *Caller, r *Record) *prepared {
	now := s.now()
	lin := lineage{authority: AuthorityConfirmed, audience: AudienceTenant}
	if len(r.Parents) > 0 {
		// The parents' lineage as a read sees it, which the writer reads
		// again (a parent retired or suspended meanwhile, say).
		if err := s.store.View(ctx, func(tx Tx) error {
			var err error
			lin, err = s.parents(ctx, tx, c, r.Parents)
			return err
		}); err != nil {
			return nil // the writer reads them again and reports what is wrong
		}
	}
	st, ok := s.hints.predict(c, r, lin, now)
	if !ok && !s.hints.knowsTenant(r.Tenant) {
		// A tenant the writer has not decided for yet: its policy and
		// pauses as a read sees them are as good a guess.
		s.learnTenant(ctx, r.Tenant, now)
		st, ok = s.hints.predict(c, r, lin, now)
	}
	if !ok {
		return nil
	}
	key := s.cachedKey(c.Principal)
	if key == nil {
		if err := s.store.View(ctx, func(tx Tx) error {
			var err error
			key, err = s.principalKey(ctx, tx, c.Principal)
			return err
		}); err != nil {
			return nil // the writer reads it again and reports what is wrong
		}
	}
	// r is only read: the record decided is a copy, with the salt its
	// first entry gives it (as recordEntry would), which the writer sets
	// on r if it applies this decision.
	d := *r
	if len(d.Salt) == 0 {
		d.Salt = newSalt()
	}
	v := s.admission(c, &d, st, true, 0)
	v.apply(&d)
	d.State = v.receipt.Decision
	e := transitionEntry(&d, "admission", "", v.receipt)
	e.Actor, e.Time = c.Principal.ID(), now
	leaf := e.SignLeaf(key)
	var packed []byte
	if lp, ok := s.store.(leafPacker); ok {
		packed = lp.PackLeaf(leaf)
	}
	return &prepared{st: st, v: v, salt: d.Salt, key: key, entry: e, leaf: leaf, packed: packed}
}

// applyAdmission decides the new record r against st, the state its
// transaction holds, and logs the decision: p's when p was prepared
// against that very state and its key still signs for c's principal, one
// made here otherwise.
func (s *Service) applyAdmission(ctx context.Context, tx Tx, c *Caller, r *Record, st *admitState, p *prepared) error {
	if p == nil || !p.st.same(st) || !sameKey(s.cachedKey(c.Principal), p.key) {
		v := s.admission(c, r, st, true, 0)
		v.apply(r)
		r.State = ""
		return s.transition(ctx, tx, c.Principal, r, "admission", v.receipt.Decision, v.receipt)
	}
	p.v.apply(r)
	r.State, r.Salt = p.v.receipt.Decision, p.salt
	if err := checkLeaf(p.entry, p.leaf); err != nil {
		return err
	}
	var idx uint64
	var err error
	if pa, ok := tx.(packedAppender); ok && p.packed != nil {
		idx, err = pa.AppendPackedLeaf(ctx, r.Tenant, p.leaf, p.packed)
	} else {
		idx, err = tx.AppendLeaf(ctx, r.Tenant, p.leaf)
	}
	if err != nil {
		return err
	}
	return s.settle(ctx, tx, r, "admission", p.v.receipt, p.entry, idx)
}

// cachedKey is p's unsealed signing key if the service holds it, else nil.
func (s *Service) cachedKey(p *Principal) ed25519.PrivateKey {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys[p.ID()]
}

// sameKey reports whether a and b are the one key the service holds (a
// revocation drops it, and a key loaded again is another).
func sameKey(a, b ed25519.PrivateKey) bool {
	return len(a) > 0 && len(a) == len(b) && &a[0] == &b[0]
}

// hints are what the writer last read of the state decisions depend on,
// kept for prepare to predict from. They are guesses, never trusted: a
// wrong one costs the prepared decision, which the writer then makes
// again.
type hints struct {
	mu       sync.Mutex
	policies map[string]*Policy  // by tenant
	pauses   map[string][]*Pause // open pauses, by tenant
	keys     map[keyRef]keyHint
	sessions map[sessionRef]sessionHint
}

type keyRef struct{ tenant, owner, namespace, key string }

type keyHint struct {
	current string
	version int
}

type sessionRef struct{ tenant, id string }

type sessionHint struct {
	subject string
	floor   Authority
}

// maxHints bounds the keys and sessions hinted; past it they are dropped
// and learned again.
const maxHints = 4096

// predict is the state the hints give for r's decision, with its parents'
// lineage lin, or false if they give none. A key not hinted is predicted
// new (no version yet).
func (h *hints) predict(c *Caller, r *Record, lin lineage, now time.Time) (*admitState, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := &admitState{lin: lin}
	var ok bool
	if st.policy, ok = h.policies[r.Tenant]; !ok {
		return nil, false
	}
	ps, ok := h.pauses[r.Tenant]
	if !ok {
		return nil, false
	}
	st.pause = holdOf(ps, now, c.Principal.ID(), r.Channel)
	if r.Session != "" {
		sh, ok := h.sessions[sessionRef{r.Tenant, r.Session}]
		if !ok || sh.subject != c.Subject.Name {
			return nil, false
		}
		st.floor = sh.floor
	}
	if r.Key != "" {
		kh := h.keys[keyRef{r.Tenant, r.Owner, r.Namespace, r.Key}]
		st.current, st.version = kh.current, kh.version
	}
	return st, true
}

// knowsTenant reports whether h has learned of tenant (its pauses, and
// its policy unless that could not be loaded).
func (h *hints) knowsTenant(tenant string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.pauses[tenant]
	return ok
}

// learnTenant reads tenant's policy and open pauses into the hints, unless
// the writer has put them there meanwhile.
func (s *Service) learnTenant(ctx context.Context, tenant string, now time.Time) {
	var pol *Policy
	var ps []*Pause
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		if ps, err = tx.OpenPauses(ctx, tenant, now); err != nil {
			return err
		}
		pol, _ = s.policyFor(ctx, tx, tenant) // none: not predicted, and the writer decides pending
		return nil
	})
	if err != nil {
		return // the writer reads them again and decides as they are
	}
	h := &s.hints
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.policies == nil {
		h.policies, h.pauses = map[string]*Policy{}, map[string][]*Pause{}
	}
	if _, ok := h.pauses[tenant]; !ok {
		h.pauses[tenant] = ps
		if pol != nil {
			h.policies[tenant] = pol
		}
	}
}

// learn keeps what the writer read for r's decision (st, and the tenant's
// open pauses ps), and what r, as decided, makes of its key.
func (h *hints) learn(c *Caller, r *Record, st *admitState, ps []*Pause) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.policies == nil {
		h.policies, h.pauses = map[string]*Policy{}, map[string][]*Pause{}
	}
	if st.policy != nil {
		h.policies[r.Tenant] = st.policy
	} else {
		delete(h.policies, r.Tenant)
	}
	h.pauses[r.Tenant] = ps
	if r.Key != "" {
		if len(h.keys) >= maxHints || h.keys == nil {
			h.keys = map[keyRef]keyHint{}
		}
		kh := keyHint{current: st.current, version: r.Version}
		if r.State == StateAdmitted {
			kh.current = r.ID
		}
		h.keys[keyRef{r.Tenant, r.Owner, r.Namespace, r.Key}] = kh
	}
	if r.Session != "" {
		if len(h.sessions) >= maxHints || h.sessions == nil {
			h.sessions = map[sessionRef]sessionHint{}
		}
		h.sessions[sessionRef{r.Tenant, r.Session}] = sessionHint{subject: c.Subject.Name, floor: st.floor}
	}
}
