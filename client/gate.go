package client

import (
	"context"

	"github.com/custody-mem/custody"
	"github.com/custody-mem/custody/httpapi"
)

// Gate asks whether an action may run (POST /v1/gate).
func (c *Client) Gate(ctx context.Context, req httpapi.GateRequest) (*custody.GateDecision, error) {
	return do[custody.GateDecision](ctx, c, "POST", "/v1/gate", nil, req)
}

// ConfirmAction is the owner's one-time confirmation of an exact action
// (POST /v1/gate/confirm); it returns the action's digest.
func (c *Client) ConfirmAction(ctx context.Context, req httpapi.GateConfirmRequest) (string, error) {
	var r httpapi.GateConfirmResponse
	err := c.call(ctx, "POST", "/v1/gate/confirm", nil, req, &r)
	return r.Digest, err
}
