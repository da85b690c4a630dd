package client

import (
	"context"
	"net/url"

	"github.com/custody-mem/custody"
	"github.com/custody-mem/custody/httpapi"
)

// GetIn is Get in a session the caller opened: the server records that the
// session's read returned the record (Search takes httpapi.SearchRequest's
// Session for the same).
func (c *Client) GetIn(ctx context.Context, id, subject, session string) (*custody.Record, error) {
	q := url.Values{}
	if subject != "" {
		q.Set("subject", subject)
	}
	if session != "" {
		q.Set("session", session)
	}
	return do[custody.Record](ctx, c, "GET", idPath("/v1/memories/%s", id), q, nil)
}

// ListIn is List in a session the caller opened: the ids of the page are
// recorded as the session's read.
func (c *Client) ListIn(ctx context.Context, session string, o ListOptions) (*httpapi.ListResponse, error) {
	q := o.query()
	if session != "" {
		q.Set("session", session)
	}
	return do[httpapi.ListResponse](ctx, c, "GET", "/v1/memories", q, nil)
}

// Impact lists what a record reached: its descendants, the sessions whose
// reads returned it and the gate decisions that relied on it
// (GET /v1/memories/{id}/impact; reviewer or admin).
func (c *Client) Impact(ctx context.Context, id string) (*custody.Impact, error) {
	return do[custody.Impact](ctx, c, "GET", idPath("/v1/memories/%s/impact", id), nil, nil)
}
