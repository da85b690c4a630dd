package custody

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cedar-policy/cedar-go"
)

// Roles in review. A reviewer's approval stands in for the admission a
// candidate did not get, but not for a right admission reserves for a
// role: a procedure changes how agents behave, and admitting one needs a
// policy_owner or an admin (design rule 2), so approving one needs that
// role too. The policy says which candidates are so reserved: an
// admission forbid annotated @approver("policy_owner, admin") reserves
// the approval of what it matches, evaluated on the candidate without
// any writer's roles (the reservation is about the content, not about
// who wrote it), to a principal holding one of the roles listed. A
// procedure is reserved whatever the policy says, so a tenant policy
// written before the annotation keeps the rule.

// ApprovalNeed says which roles approving a candidate needs beyond the
// reviewer's, and which rules reserve it.
type ApprovalNeed struct {
	Roles []string `json:"roles" doc:"approving needs one of these roles"`
	Rules []string `json:"rules" doc:"the rules that reserve it (procedures-need-policy-owner, ...)"`
}

// procedureApprovers hold the right to approve a procedure, whatever the
// policy.
var procedureApprovers = []string{RolePolicyOwner, RoleAdmin}

// parseApprover parses an @approver annotation: role names separated by
// commas or spaces, at least one.
func parseApprover(s string) ([]string, error) {
	var roles []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		if err := ValidRole(f); err != nil {
			return nil, fmt.Errorf("@approver: %w", err)
		}
		roles = append(roles, f)
	}
	if len(roles) == 0 {
		return nil, fmt.Errorf("@approver names no role; name the roles whose approval it needs, e.g. @approver(\"policy_owner, admin\")")
	}
	return roles, nil
}

// approvalNeed is what approving r needs under p: nil when a reviewer's
// approval is enough. A policy that cannot be evaluated on r reserves it
// for an admin (fail closed: the error is in the rules).
func (s *Service) approvalNeed(ctx context.Context, tx Tx, p *Policy, r *Record) (*ApprovalNeed, error) {
	need := &ApprovalNeed{}
	if r.Class == ClassProcedure {
		need.Roles = slices.Clone(procedureApprovers)
		need.Rules = []string{"procedure"}
	}
	if p != nil && len(p.approvers) > 0 {
		in := AdmissionInput{Principal: &Principal{Tenant: r.Tenant, Name: "approver"}, Channel: r.Channel, Class: r.Class, Key: r.Key,
			Authority: r.Authority, Audience: r.Audience, Sensitive: s.Sensitive(r.Key), HasSession: r.Session != "",
			Derived: len(r.Parents) > 0, Metadata: r.Metadata}
		if r.Key != "" {
			cur, err := tx.CurrentID(ctx, r.Tenant, r.Owner, r.Namespace, r.Key)
			if err != nil {
				return nil, err
			}
			in.Overwrite = cur != "" && cur != r.ID
		}
		_, diag := cedar.Authorize(p.all, nil, in.request())
		for _, e := range diag.Errors {
			if _, ok := p.approvers[e.PolicyID]; ok {
				need.Roles = appendNew(need.Roles, RoleAdmin)
				need.Rules = append(need.Rules, p.names[e.PolicyID]+" (could not be evaluated: "+e.Message+")")
			}
		}
		for _, rs := range diag.Reasons {
			if roles, ok := p.approvers[rs.PolicyID]; ok {
				need.Roles = appendNew(need.Roles, roles...)
				need.Rules = append(need.Rules, p.names[rs.PolicyID])
			}
		}
	}
	if len(need.Roles) == 0 {
		return nil, nil
	}
	return need, nil
}

// approvalNeedUnder is approvalNeed under the tenant's policy, or, when
// that policy could not be loaded (polErr), reserved for an admin.
func (s *Service) approvalNeedUnder(ctx context.Context, tx Tx, p *Policy, polErr error, r *Record) (*ApprovalNeed, error) {
	if polErr != nil {
		return &ApprovalNeed{Roles: []string{RoleAdmin}, Rules: []string{"policy-unavailable"}}, nil
	}
	return s.approvalNeed(ctx, tx, p, r)
}

// allows reports whether p may approve what n reserves.
func (n *ApprovalNeed) allows(p *Principal) bool { return n == nil || p.HasAny(n.Roles...) }

// refusal is the 403 of a principal n does not allow.
func (n *ApprovalNeed) refusal(p *Principal, r *Record) error {
	what := "this " + string(r.Class)
	if r.Class == ClassProcedure {
		what = "a procedure (it changes how agents behave)"
	}
	return forbidden("approving %s needs the %s role (%s); %s holds %s: ask a principal with that role to approve it, or reject it",
		what, strings.Join(n.Roles, " or "), strings.Join(n.Rules, ", "), p.ID(), strings.Join(p.Roles, ", "))
}

func appendNew(list []string, vs ...string) []string {
	for _, v := range vs {
		if !slices.Contains(list, v) {
			list = append(list, v)
		}
	}
	return list
}
