package custody

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/custody-mem/custody/tlog"
)

// A principal's rights are covered by the log: every entry that creates or
// changes a principal is signed by the server and carries its whole state
// (roles, channels, groups, public key, a digest of its token hash and of
// its sealed key), and the latest such entry for a name is the state the
// store must hold. The principal's row keeps the index of that entry, so
// the server checks a principal by reading one leaf (once per entry and
// process) and comparing; verify replays every entry and compares them
// all.
//
// Entries written before the digests were logged carry none: for such a
// principal the roles, channels, groups and public key are checked, and
// the token hash and sealed key are not covered (VerifyReport.Uncovered
// names them) until a later entry restates the principal.

// TransitionPrincipal is the transition of a log entry that introduces a
// principal. Later entries that change one (a revocation, a rotated token,
// new rights) carry the same fields and are replayed the same way: list
// their transitions in principalTransitions.
const TransitionPrincipal = "principal"

// principalTransitions are the transitions whose entries state a
// principal's whole state; the latest one for a name wins.
var principalTransitions = map[string]bool{TransitionPrincipal: true}

// NoLogIndex is Principal.LogIndex of a row that names no log entry.
const NoLogIndex = -1

// Detail keys of a principal entry.
const (
	detailTokenDigest  = "token_digest"
	detailSealedDigest = "sealed_key_digest"
)

// principalFields are the details of a principal entry that the stored
// principal must match, in the order a mismatch is reported.
var principalFields = []string{"roles", "channels", "groups", "public_key", detailTokenDigest, detailSealedDigest}

// digest is how a principal entry names a stored secret: the hex SHA-256
// of the stored bytes (for a token, of its hash: the log never holds the
// value the store looks tokens up by).
func digest(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// principalState is what a principal entry says a stored principal must
// hold: its fields as principalFields name them.
func principalState(p *Principal) map[string]string {
	return map[string]string{
		"roles": strings.Join(p.Roles, ","), "channels": strings.Join(p.Channels, ","),
		"groups": strings.Join(p.Groups, ","), "public_key": fmt.Sprintf("%x", []byte(p.PublicKey)),
		detailTokenDigest: digest(p.TokenHash), detailSealedDigest: digest(p.SealedKey),
	}
}

// principalDiff names the first field in which stored disagrees with the
// logged details, or "". A detail the entry does not carry (an entry older
// than the digests) is not compared.
func principalDiff(stored *Principal, logged map[string]string) string {
	got := principalState(stored)
	for _, f := range principalFields {
		want, ok := logged[f]
		if !ok && (f == detailTokenDigest || f == detailSealedDigest) {
			continue
		}
		if got[f] != want {
			return f
		}
	}
	return ""
}

// fieldName is how a mismatch names a principal field to people.
func fieldName(f string) string {
	switch f {
	case detailTokenDigest:
		return "token hash"
	case detailSealedDigest:
		return "sealed key"
	case "public_key":
		return "public key"
	}
	return f
}

// appendPrincipal appends a principal entry e signed by the server: the
// principal's row must already be in tx. The digests of its token hash and
// sealed key are taken from the row when e does not carry them, and the
// row is pointed at the new entry.
func (s *Service) appendPrincipal(ctx context.Context, tx Tx, e *tlog.Entry) (uint64, error) {
	name := e.Details["name"]
	if _, ok := e.Details[detailTokenDigest]; !ok {
		th, err := tx.TokenHash(ctx, e.Tenant, name)
		if err != nil {
			return 0, fmt.Errorf("logging principal %s/%s: %w", e.Tenant, name, err)
		}
		e.Details[detailTokenDigest] = digest(th)
	}
	if _, ok := e.Details[detailSealedDigest]; !ok {
		sk, err := tx.SealedKey(ctx, e.Tenant, name)
		if err != nil {
			return 0, fmt.Errorf("logging principal %s/%s: %w", e.Tenant, name, err)
		}
		e.Details[detailSealedDigest] = digest(sk)
	}
	idx, err := s.appendSigned(ctx, tx, s.key.SigningKey(), e)
	if err != nil {
		return 0, err
	}
	return idx, tx.SetPrincipalLogIndex(ctx, e.Tenant, name, idx)
}

// loggedPrincipal is a principal entry the server has read and verified.
type loggedPrincipal struct {
	index   int64
	details map[string]string
}

// checkPrincipal refuses a principal whose stored state disagrees with its
// latest log entry, with ErrPrincipalUnverified naming the field. It is the
// one place every transport's authentication and every subject lookup
// goes through. The entry is read and its signature verified once per
// index and process; a row that points at an older entry than one this
// process has seen is refused too (a rolled-back principal).
func (s *Service) checkPrincipal(ctx context.Context, p *Principal) error {
	if p.LogIndex < 0 {
		return principalMismatch(p, "log index", "its row names no log entry (it was added outside custody)")
	}
	id := p.ID()
	s.mu.Lock()
	lp, ok := s.principalLog[id]
	s.mu.Unlock()
	switch {
	case ok && lp.index > p.LogIndex:
		return principalMismatch(p, "log index", fmt.Sprintf("its row points at log entry %d, older than its entry %d", p.LogIndex, lp.index))
	case !ok || lp.index < p.LogIndex:
		details, err := s.readPrincipalEntry(ctx, p)
		if err != nil {
			return err
		}
		lp = loggedPrincipal{index: p.LogIndex, details: details}
		s.mu.Lock()
		if cur, ok := s.principalLog[id]; !ok || cur.index < lp.index {
			s.principalLog[id] = lp
		}
		s.mu.Unlock()
	}
	if f := principalDiff(p, lp.details); f != "" {
		return principalMismatch(p, fieldName(f), fmt.Sprintf("%s: the stored value differs from log entry %d", fieldName(f), lp.index))
	}
	return revokedErr(p, lp.details)
}

// readPrincipalEntry reads the entry p's row points at and checks that it
// is a principal entry of p signed by the server.
func (s *Service) readPrincipalEntry(ctx context.Context, p *Principal) (map[string]string, error) {
	idx := uint64(p.LogIndex)
	ls, err := s.store.Leaves(ctx, p.Tenant, idx, idx+1)
	if err != nil {
		return nil, err
	}
	if len(ls) != 1 || ls[0].Index != idx {
		return nil, principalMismatch(p, "log index", fmt.Sprintf("its row points at log entry %d, which the log does not hold", idx))
	}
	e, err := tlog.ParseLeaf(ls[0].Data)
	if err != nil || e.Verify(s.key.PublicKey()) != nil {
		return nil, principalMismatch(p, "log index", fmt.Sprintf("log entry %d is not an entry signed by this server", idx))
	}
	if !principalTransitions[e.Transition] || e.Tenant != p.Tenant || e.Details["name"] != p.Name || ls[0].Tenant != p.Tenant {
		return nil, principalMismatch(p, "log index", fmt.Sprintf("log entry %d is not an entry of this principal", idx))
	}
	return e.Details, nil
}

// PrincipalMismatch is the error of a principal whose stored state
// disagrees with the log. It wraps ErrPrincipalUnverified.
type PrincipalMismatch struct {
	Principal string // tenant/name
	Field     string // "roles", "channels", "groups", "public key", "token hash", "sealed key", "log index"
	Detail    string
}

func (e *PrincipalMismatch) Error() string {
	return fmt.Sprintf("principal %s disagrees with the audit log: %s; the server will not act for it until an operator runs custody verify and restores the principal", e.Principal, e.Detail)
}

// Unwrap lets errors.Is match ErrPrincipalUnverified.
func (e *PrincipalMismatch) Unwrap() error { return ErrPrincipalUnverified }

func principalMismatch(p *Principal, field, detail string) error {
	return &PrincipalMismatch{Principal: p.ID(), Field: field, Detail: detail}
}

// verifiedPrincipal is checkPrincipal for a principal just read: a store
// error passes through unchanged.
func (s *Service) verifiedPrincipal(ctx context.Context, p *Principal, err error) (*Principal, error) {
	if err != nil {
		return nil, err
	}
	if err := s.checkPrincipal(ctx, p); err != nil {
		return nil, err
	}
	return p, nil
}
