package client

import (
	"context"

	"github.com/custody-mem/custody/httpapi"
)

// Policy returns the tenant's active policy (GET /v1/policy).
func (c *Client) Policy(ctx context.Context, subject string) (*httpapi.PolicyResponse, error) {
	return do[httpapi.PolicyResponse](ctx, c, "GET", "/v1/policy", subjectQuery(subject), nil)
}

// SetPolicy replaces the tenant's policy with the Cedar text (PUT
// /v1/policy, policy_owner only).
func (c *Client) SetPolicy(ctx context.Context, text []byte) (*httpapi.PolicyChangeResponse, error) {
	return do[httpapi.PolicyChangeResponse](ctx, c, "PUT", "/v1/policy", nil, text)
}
