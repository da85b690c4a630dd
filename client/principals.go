package client

import (
	"context"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/httpapi"
)

// Principals lists the tenant's principals (GET /v1/principals, admin).
func (c *Client) Principals(ctx context.Context) ([]custody.PrincipalInfo, error) {
	r, err := do[httpapi.PrincipalsResponse](ctx, c, "GET", "/v1/principals", nil, nil)
	if err != nil {
		return nil, err
	}
	return r.Items, nil
}

// Principal shows one principal (GET /v1/principals/{name}, admin).
func (c *Client) Principal(ctx context.Context, name string) (*custody.PrincipalInfo, error) {
	return do[custody.PrincipalInfo](ctx, c, "GET", idPath("/v1/principals/%s", name), nil, nil)
}

// UpdatePrincipal changes a principal's rights (PATCH
// /v1/principals/{name}, admin).
func (c *Client) UpdatePrincipal(ctx context.Context, name string, req httpapi.PrincipalUpdateRequest) (*custody.PrincipalInfo, error) {
	return do[custody.PrincipalInfo](ctx, c, "PATCH", idPath("/v1/principals/%s", name), nil, req)
}

// RotatePrincipal gives a principal a new token (POST
// /v1/principals/{name}/rotate, admin).
func (c *Client) RotatePrincipal(ctx context.Context, name, reason string) (*httpapi.RotateResponse, error) {
	return do[httpapi.RotateResponse](ctx, c, "POST", idPath("/v1/principals/%s/rotate", name), nil, httpapi.PrincipalReasonRequest{Reason: reason})
}

// RevokePrincipal revokes a principal (POST /v1/principals/{name}/revoke,
// admin).
func (c *Client) RevokePrincipal(ctx context.Context, name, reason string) (*custody.PrincipalInfo, error) {
	return do[custody.PrincipalInfo](ctx, c, "POST", idPath("/v1/principals/%s/revoke", name), nil, httpapi.PrincipalReasonRequest{Reason: reason})
}
