package client

import (
	"context"

	"github.com/custody-mem/custody"
	"github.com/custody-mem/custody/httpapi"
)

// OpenSession opens a session for subject (POST /v1/sessions).
func (c *Client) OpenSession(ctx context.Context, subject string) (*custody.Session, error) {
	return do[custody.Session](ctx, c, "POST", "/v1/sessions", nil, httpapi.SessionRequest{Subject: subject})
}

// Observe records content that entered the model's context in a session
// (POST /v1/sessions/{id}/observations) and returns the session.
func (c *Client) Observe(ctx context.Context, session string, req httpapi.ObservationRequest) (*custody.Session, error) {
	return do[custody.Session](ctx, c, "POST", idPath("/v1/sessions/%s/observations", session), nil, req)
}
