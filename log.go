package custody

import (
	"context"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"strconv"
	"strings"

	"github.com/custody-mem/custody/tlog"
)

// ServerActor is the actor of entries the server writes on its own account
// (the review sweep, principal creation); they are signed with the server key.
const ServerActor = "server"

// appendAs signs e with the acting principal's key and appends it to the log
// in tx, returning its index.
func (s *Service) appendAs(ctx context.Context, tx Tx, actor *Principal, e *tlog.Entry) (uint64, error) {
	key, err := s.principalKey(ctx, tx, actor)
	if err != nil {
		return 0, err
	}
	e.Actor = actor.ID()
	return s.appendSigned(ctx, tx, key, e)
}

// appendServer appends an entry signed by the server key. A principal
// entry also points the principal's row at it (see appendPrincipal).
func (s *Service) appendServer(ctx context.Context, tx Tx, e *tlog.Entry) (uint64, error) {
	e.Actor = ServerActor
	if principalTransitions[e.Transition] {
		return s.appendPrincipal(ctx, tx, e)
	}
	return s.appendSigned(ctx, tx, s.key.SigningKey(), e)
}

func (s *Service) appendSigned(ctx context.Context, tx Tx, key ed25519.PrivateKey, e *tlog.Entry) (uint64, error) {
	if e.Time.IsZero() {
		e.Time = s.now()
	}
	leaf := e.SignLeaf(key)
	if err := checkLeaf(e, leaf); err != nil {
		return 0, err
	}
	return tx.AppendLeaf(ctx, e.Tenant, leaf)
}

func (s *Service) principalKey(ctx context.Context, tx Tx, p *Principal) (ed25519.PrivateKey, error) {
	id := p.ID()
	s.mu.Lock()
	k, ok := s.keys[id]
	s.mu.Unlock()
	if ok {
		return k, nil
	}
	sealed, err := tx.SealedKey(ctx, p.Tenant, p.Name)
	if err != nil {
		return nil, fmt.Errorf("signing key of %s: %w", id, err)
	}
	raw, err := s.key.Open(sealed, []byte(id))
	if err != nil {
		return nil, fmt.Errorf("unsealing the signing key of %s (is this the server key the store was created with?): %w", id, err)
	}
	k = ed25519.PrivateKey(raw)
	s.mu.Lock()
	s.keys[id] = k
	s.mu.Unlock()
	return k, nil
}

// SaltSize is the length in bytes of a record's body salt.
const SaltSize = 32

// BodyHash is what the log keeps of a record body: HMAC-SHA256 of the body
// keyed with the record's salt, a random secret kept with the record and
// never in the log, so a body cannot be recovered from the log by hashing
// guesses, however short it is. A record written before salts (SQLite
// schema 8, PostgreSQL migration 2 and earlier) has an empty salt and keeps
// the plain SHA-256 of its body, which still verifies.
func BodyHash(salt []byte, body string) []byte {
	if len(salt) == 0 {
		h := sha256.Sum256([]byte(body))
		return h[:]
	}
	m := hmac.New(sha256.New, salt)
	m.Write([]byte(body))
	return m.Sum(nil)
}

// newSalt returns a fresh random body salt.
func newSalt() []byte {
	b := make([]byte, SaltSize)
	rand.Read(b)
	return b
}

// recordEntry is the log entry of a transition of r. It carries every field
// of the record except the body (only its salted hash, see BodyHash), so
// that verify can replay the log into the expected state of every record.
// A record's first entry in this log (its admission, a rebuild's new
// version, a restore) gives it a fresh salt unless it brings one (a
// restored record keeps the salt its snapshot carries); this is the one
// place salts are made.
func recordEntry(r *Record, transition string, prev State) *tlog.Entry {
	if prev == "" && len(r.Salt) == 0 && !r.Erased {
		r.Salt = newSalt()
	}
	parents := make([]string, len(r.Parents))
	for i, p := range r.Parents {
		parents[i] = p.ID + "=" + strconv.FormatFloat(p.Weight, 'g', -1, 64)
	}
	var bodyHash []byte // an erased body keeps only the hash of its admission entry
	if !r.Erased {
		bodyHash = BodyHash(r.Salt, r.Body)
	}
	e := &tlog.Entry{
		Tenant: r.Tenant, RecordID: r.ID, Transition: transition,
		PrevState: string(prev), NewState: string(r.State),
		BodyHash: bodyHash, PolicyVersion: r.PolicyVersion,
		Details: map[string]string{
			"owner": r.Owner, "namespace": r.Namespace, "key": r.Key, "class": string(r.Class),
			"channel": r.Channel, "writer": r.Writer, "source_ref": r.SourceRef,
			"authority": r.Authority.String(), "audience": r.Audience,
			"expires_at": fmtTime(r.ExpiresAt), "version": strconv.Itoa(r.Version),
			"parents": strings.Join(parents, ","), "session": r.Session,
			"erased":     strconv.FormatBool(r.Erased),
			"created_at": fmtTime(&r.CreatedAt),
		},
	}
	if m := metadataCommitment(r); m != "" {
		e.Details[detailMetadata] = m
	}
	return e
}

// transition moves r to state next, logs it signed by actor (nil: the
// server). The log index and receipt are updated on r; the caller stores r.
func (s *Service) transition(ctx context.Context, tx Tx, actor *Principal, r *Record, name string, next State, rc *Receipt) error {
	prev := r.State
	r.State = next
	e := transitionEntry(r, name, prev, rc)
	var idx uint64
	var err error
	if actor == nil {
		idx, err = s.appendServer(ctx, tx, e)
	} else {
		idx, err = s.appendAs(ctx, tx, actor, e)
	}
	if err != nil {
		return err
	}
	return s.settle(ctx, tx, r, name, rc, e, idx)
}

// transitionEntry is the unsigned log entry of r's transition name from
// prev to r.State, decided with receipt rc (nil: none).
func transitionEntry(r *Record, name string, prev State, rc *Receipt) *tlog.Entry {
	e := recordEntry(r, name, prev)
	if rc != nil {
		e.Details["reason"] = rc.Reason
		e.Details["rules"] = strings.Join(rc.Rules, ",")
		if rc.Error != "" {
			e.Details["error"] = rc.Error
		}
		e.Details[detailInputs] = inputsDigest(rc.Inputs)
	}
	return e
}

// settle finishes r's transition name once its entry e is in the log at
// idx: the log index and receipt on r, the tombstone of a terminal state,
// and the event observers are told of at the commit.
func (s *Service) settle(ctx context.Context, tx Tx, r *Record, name string, rc *Receipt, e *tlog.Entry, idx uint64) error {
	next := r.State
	r.LogIndex = idx
	if rc != nil {
		rc.LogIndex = idx
		rc.Actor = e.Actor
		rc.Time = e.Time
		r.Receipt = rc
	}
	if next.Terminal() {
		if err := s.registry.add(r.Tenant, r.ID, next, r.Erased); err != nil {
			return err
		}
		if err := tx.Tombstone(ctx, r.Tenant, r.ID, next); err != nil {
			return err
		}
	}
	kind := "transition"
	switch name {
	case "admission", "reevaluate", "rebuild":
		kind = "admission" // decisions of the policy, as opposed to people
	}
	emitIn(tx, Event{Kind: kind, Tenant: r.Tenant, Channel: r.Channel, Class: r.Class, Decision: string(next), Action: name, Record: r.ID})
	return nil
}
