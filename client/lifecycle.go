package client

import (
	"context"
	"net/url"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/httpapi"
)

// Forget retires a memory of the caller's own (DELETE /v1/memories/{id}),
// or erases it with erase. It returns the affected ids.
func (c *Client) Forget(ctx context.Context, id, reason string, erase bool) ([]string, error) {
	q := url.Values{}
	if erase {
		q.Set("erase", "true")
	}
	if reason != "" {
		q.Set("reason", reason)
	}
	r, err := do[httpapi.AffectedResponse](ctx, c, "DELETE", idPath("/v1/memories/%s", id), q, nil)
	if err != nil {
		return nil, err
	}
	return r.Affected, nil
}

// EraseSubject erases every memory body of a subject (POST
// /v1/subjects/{name}/erase).
func (c *Client) EraseSubject(ctx context.Context, subject, reason string) (*custody.ErasureReceipt, error) {
	return do[custody.ErasureReceipt](ctx, c, "POST", idPath("/v1/subjects/%s/erase", subject), nil, httpapi.EraseRequest{Reason: reason})
}

// Pause holds a writer's or a channel's candidates (POST /v1/pauses).
func (c *Client) Pause(ctx context.Context, req httpapi.PauseRequest) (*custody.Pause, error) {
	return do[custody.Pause](ctx, c, "POST", "/v1/pauses", nil, req)
}

// Pauses lists the tenant's active pauses, or all with all (GET
// /v1/pauses).
func (c *Client) Pauses(ctx context.Context, all bool) ([]*custody.Pause, error) {
	q := url.Values{}
	if all {
		q.Set("all", "true")
	}
	r, err := do[httpapi.PausesResponse](ctx, c, "GET", "/v1/pauses", q, nil)
	if err != nil {
		return nil, err
	}
	return r.Items, nil
}

// Resume ends a pause (DELETE /v1/pauses/{id}).
func (c *Client) Resume(ctx context.Context, id string) (*custody.Pause, error) {
	return do[custody.Pause](ctx, c, "DELETE", idPath("/v1/pauses/%s", id), nil, nil)
}
