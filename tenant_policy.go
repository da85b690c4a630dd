package custody

import (
	"context"
	"errors"

	"github.com/custody-mem/custody/tlog"
)

// policyFor is the active policy of a tenant: the one it set with PUT
// /v1/policy, else the server's. A stored policy that no longer parses is an
// error, which admission turns into pending (fail closed).
func (s *Service) policyFor(ctx context.Context, tx Tx, tenant string) (*Policy, error) {
	text, err := tx.Policy(ctx, tenant)
	if errors.Is(err, ErrNotFound) {
		return s.policy, nil
	}
	if err != nil {
		return nil, err
	}
	v := PolicyVersion(text)
	s.mu.Lock()
	p, ok := s.policies[v]
	s.mu.Unlock()
	if ok {
		return p, nil
	}
	if p, err = ParsePolicy(text); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.policies[v] = p
	s.mu.Unlock()
	return p, nil
}

// ActivePolicy returns the caller's tenant's active policy.
func (s *Service) ActivePolicy(ctx context.Context, c *Caller) (*Policy, error) {
	var p *Policy
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		p, err = s.policyFor(ctx, tx, c.Tenant())
		return err
	})
	return p, err
}

// PolicyChange says how ChangePolicy installs a policy.
type PolicyChange struct {
	// Force installs the policy even when DryRunPolicy finds candidates it
	// cannot evaluate; those then wait as pending (fail closed).
	Force bool
}

// ChangePolicy is SetPolicy after a dry run: unless ch.Force, a policy that
// DryRunPolicy cannot evaluate on the tenant's recent candidates is refused
// (ErrInvalid naming the candidate and the error) and the active policy
// stays. The transports use it.
func (s *Service) ChangePolicy(ctx context.Context, c *Caller, text []byte, ch PolicyChange) (*Policy, []string, error) {
	if !c.Principal.HasAny(RolePolicyOwner) {
		return nil, nil, forbidden("changing the policy needs the policy_owner role")
	}
	if !ch.Force {
		if err := s.DryRunPolicy(ctx, c, text); err != nil {
			return nil, nil, err
		}
	}
	return s.SetPolicy(ctx, c, text)
}

// SetPolicy replaces the tenant's policy (policy_owner only), logs the
// change, and re-evaluates the tenant's pending candidates under it, all in
// one transaction. It returns the new policy and the ids that left pending.
// It installs without a dry run, as ChangePolicy with Force does.
func (s *Service) SetPolicy(ctx context.Context, c *Caller, text []byte) (*Policy, []string, error) {
	if !c.Principal.HasAny(RolePolicyOwner) {
		return nil, nil, forbidden("changing the policy needs the policy_owner role")
	}
	p, err := ParsePolicy(text)
	if err != nil {
		return nil, nil, err
	}
	var changed []string
	err = s.update(ctx, func(tx Tx) error {
		if err := tx.SetPolicy(ctx, c.Tenant(), text, c.Principal.ID(), s.now()); err != nil {
			return err
		}
		_, err := s.appendAs(ctx, tx, c.Principal, &tlog.Entry{
			Tenant: c.Tenant(), Transition: "policy", PolicyVersion: p.Version,
			Details: map[string]string{"policy_sha256": p.Version},
		})
		if err != nil {
			return err
		}
		changed, err = s.reevaluate(ctx, tx, c.Principal)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return p, changed, nil
}
