package custody

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/custody-mem/custody/tlog"
)

// A principal's lifecycle after its creation: its roles, channels and
// groups change, its token is rotated (a lost or leaked token is replaced,
// and the old one is refused at once), and it is revoked (its token and
// sealed signing key are replaced by nothing anyone holds, and it can
// neither authenticate nor be acted for). Each change is a server-signed
// entry that states the principal's whole new state, as its creation did
// (principalTransitions), so the server's principal check accepts the new
// state and refuses the old one, and verify replays them. A revoked
// principal's row stays: its records keep their writer and their
// signatures verify against the public key the log announced.

// Transitions of the entries that change a principal.
const (
	TransitionPrincipalUpdate = "principal_update"
	TransitionPrincipalRotate = "principal_rotate"
	TransitionPrincipalRevoke = "principal_revoke"
)

func init() {
	for _, t := range []string{TransitionPrincipalUpdate, TransitionPrincipalRotate, TransitionPrincipalRevoke} {
		principalTransitions[t] = true
	}
}

// Principal statuses, as PrincipalInfo.Status shows them.
const (
	PrincipalActive  = "active"
	PrincipalRevoked = "revoked"
)

// detailStatus is the detail of a principal entry that marks it revoked.
const detailStatus = "status"

// PrincipalInfo is what the admin surface shows of a principal: its rights,
// its public key, its status and its latest log entry, never its token or
// keys.
type PrincipalInfo struct {
	Tenant    string    `json:"tenant"`
	Name      string    `json:"name"`
	Roles     []string  `json:"roles"`
	Channels  []string  `json:"channels"`
	Groups    []string  `json:"groups"`
	PublicKey string    `json:"public_key"`
	CreatedAt time.Time `json:"created_at"`
	Status    string    `json:"status"`
	LogIndex  int64     `json:"log_index"`
	// Problem says why the server refuses the principal when its row
	// disagrees with the log (Status is then "unverified").
	Problem string `json:"problem,omitempty"`
}

// PrincipalAdmin administers the principals of one tenant. By names who
// acts in the log entries (an admin principal, or the operator of the
// store's CLI).
type PrincipalAdmin struct {
	Tenant string
	By     string
}

// AdminOf is the PrincipalAdmin of an admin caller, for its own tenant;
// any other caller is ErrForbidden.
func (s *Service) AdminOf(c *Caller) (PrincipalAdmin, error) {
	if !c.Principal.Has(RoleAdmin) {
		return PrincipalAdmin{}, forbidden("principal %s is not an admin: only an admin lists and changes principals", c.Principal.ID())
	}
	return PrincipalAdmin{Tenant: c.Tenant(), By: c.Principal.ID()}, nil
}

// PrincipalChange is an update of a principal's rights; a nil field keeps
// the current value.
type PrincipalChange struct {
	Roles    []string `json:"roles,omitempty"`
	Channels []string `json:"channels,omitempty"`
	Groups   []string `json:"groups,omitempty"`
	// SetGroups applies Groups even when it is empty (removing every group).
	SetGroups bool   `json:"-"`
	Reason    string `json:"reason,omitempty"`
}

// ListPrincipals lists the tenant's principals by name.
func (s *Service) ListPrincipals(ctx context.Context, a PrincipalAdmin) ([]PrincipalInfo, error) {
	var ps []*Principal
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		ps, err = tx.Principals(ctx, a.Tenant)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]PrincipalInfo, 0, len(ps))
	for _, p := range ps {
		info, err := s.principalInfo(ctx, p)
		if err != nil {
			return nil, err
		}
		out = append(out, info)
	}
	return out, nil
}

// ShowPrincipal shows one principal of the tenant.
func (s *Service) ShowPrincipal(ctx context.Context, a PrincipalAdmin, name string) (PrincipalInfo, error) {
	p, err := s.adminPrincipal(ctx, a, name)
	if err != nil {
		return PrincipalInfo{}, err
	}
	return s.principalInfo(ctx, p)
}

func (s *Service) adminPrincipal(ctx context.Context, a PrincipalAdmin, name string) (*Principal, error) {
	var p *Principal
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		p, err = tx.Principal(ctx, a.Tenant, name)
		return err
	})
	if errors.Is(err, ErrNotFound) {
		return nil, notFound("principal " + a.Tenant + "/" + name)
	}
	return p, err
}

// principalInfo checks p against the log and shows it.
func (s *Service) principalInfo(ctx context.Context, p *Principal) (PrincipalInfo, error) {
	info := PrincipalInfo{Tenant: p.Tenant, Name: p.Name, Roles: nonNilStrings(p.Roles), Channels: nonNilStrings(p.Channels),
		Groups: nonNilStrings(p.Groups), PublicKey: fmt.Sprintf("%x", []byte(p.PublicKey)), CreatedAt: p.CreatedAt, LogIndex: p.LogIndex, Status: PrincipalActive}
	err := s.checkPrincipal(ctx, p)
	var pm *PrincipalMismatch
	switch {
	case errors.Is(err, errRevoked):
		info.Status = PrincipalRevoked
	case errors.As(err, &pm):
		info.Status, info.Problem = "unverified", pm.Detail
	case err != nil:
		return PrincipalInfo{}, err
	}
	return info, nil
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// UpdatePrincipal changes a principal's roles, channels or groups.
func (s *Service) UpdatePrincipal(ctx context.Context, a PrincipalAdmin, name string, ch PrincipalChange) (PrincipalInfo, error) {
	if ch.Roles == nil && ch.Channels == nil && ch.Groups == nil && !ch.SetGroups {
		return PrincipalInfo{}, invalid("roles", "name what to change: roles, channels or groups")
	}
	for _, r := range ch.Roles {
		if err := ValidRole(r); err != nil {
			return PrincipalInfo{}, err
		}
	}
	for _, c := range ch.Channels {
		if err := ValidChannel(c); err != nil {
			return PrincipalInfo{}, err
		}
	}
	for _, g := range ch.Groups {
		if err := ValidName("group", g); err != nil {
			return PrincipalInfo{}, err
		}
	}
	if a.By == a.Tenant+"/"+name && ch.Roles != nil && !slices.Contains(ch.Roles, RoleAdmin) {
		return PrincipalInfo{}, conflict("an admin may not remove its own admin role; another admin, or custody principal update on the store, can")
	}
	p, err := s.changePrincipal(ctx, a, name, TransitionPrincipalUpdate, ch.Reason, func(p *Principal) error {
		if ch.Roles != nil {
			p.Roles = ch.Roles
		}
		if ch.Channels != nil {
			p.Channels = ch.Channels
		}
		if ch.Groups != nil || ch.SetGroups {
			p.Groups = ch.Groups
		}
		return nil
	})
	if err != nil {
		return PrincipalInfo{}, err
	}
	return s.principalInfo(ctx, p)
}

// RotatePrincipal gives a principal a new bearer token, returned once, and
// refuses the old one from then on.
func (s *Service) RotatePrincipal(ctx context.Context, a PrincipalAdmin, name, reason string) (PrincipalInfo, string, error) {
	token, hash := NewToken()
	p, err := s.changePrincipal(ctx, a, name, TransitionPrincipalRotate, reason, func(p *Principal) error {
		p.TokenHash = hash
		return nil
	})
	if err != nil {
		return PrincipalInfo{}, "", err
	}
	info, err := s.principalInfo(ctx, p)
	return info, token, err
}

// RevokePrincipal revokes a principal for good: its token and sealed
// signing key are replaced by nothing anyone holds, so that it can no
// longer authenticate, sign or be acted for. Its records and its row stay.
func (s *Service) RevokePrincipal(ctx context.Context, a PrincipalAdmin, name, reason string) (PrincipalInfo, error) {
	if a.By == a.Tenant+"/"+name {
		return PrincipalInfo{}, conflict("an admin may not revoke itself; another admin, or custody principal revoke on the store, can")
	}
	_, unknown := NewToken()
	p, err := s.changePrincipal(ctx, a, name, TransitionPrincipalRevoke, reason, func(p *Principal) error {
		p.TokenHash, p.SealedKey = unknown, []byte{}
		return s.registry.addRevoked(p.Tenant, p.Name) // before the commit, so that no restore brings it back
	})
	if err != nil {
		return PrincipalInfo{}, err
	}
	s.mu.Lock()
	delete(s.keys, p.ID())
	s.mu.Unlock()
	return s.principalInfo(ctx, p)
}

// changePrincipal applies fn to the tenant's principal name, which must
// agree with the log and not be revoked, stores it and logs its new state
// with transition. It returns the principal as stored.
func (s *Service) changePrincipal(ctx context.Context, a PrincipalAdmin, name, transition, reason string, fn func(*Principal) error) (*Principal, error) {
	if err := validReason(reason); err != nil {
		return nil, err
	}
	p, err := s.adminPrincipal(ctx, a, name)
	if err != nil {
		return nil, err
	}
	switch err := s.checkPrincipal(ctx, p); {
	case errors.Is(err, errRevoked):
		return nil, conflict("principal %s is revoked; a revoked principal stays revoked (add a new principal instead)", p.ID())
	case err != nil:
		return nil, err
	}
	err = s.update(ctx, func(tx Tx) error {
		cur, err := tx.Principal(ctx, a.Tenant, name)
		if err != nil {
			return err
		}
		if cur.LogIndex != p.LogIndex {
			return conflict("principal %s changed meanwhile (log entry %d); show it again and retry", p.ID(), cur.LogIndex)
		}
		if err := fn(cur); err != nil {
			return err
		}
		if len(cur.Roles) == 0 {
			return invalid("roles", "a principal keeps at least one role; to take every right away, revoke it")
		}
		if err := tx.UpdatePrincipal(ctx, cur, cur.TokenHash, cur.SealedKey); err != nil {
			return err
		}
		details := principalState(cur)
		details["name"] = cur.Name
		details["by"] = a.By
		if reason != "" {
			details["reason"] = reason
		}
		if transition == TransitionPrincipalRevoke {
			details[detailStatus] = PrincipalRevoked
		}
		idx, err := s.appendServer(ctx, tx, &tlog.Entry{Tenant: cur.Tenant, Transition: transition, Details: details})
		cur.LogIndex = int64(idx)
		p = cur
		return err
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// errRevoked is the error of a revoked principal: it neither
// authenticates nor is acted for.
var errRevoked = &Error{Kind: ErrUnauthenticated, Msg: "the principal was revoked"}

// revokedErr is errRevoked for p when its latest entry revokes it.
func revokedErr(p *Principal, details map[string]string) error {
	if details[detailStatus] == PrincipalRevoked {
		return fmt.Errorf("principal %s: %w", p.ID(), errRevoked)
	}
	return nil
}
