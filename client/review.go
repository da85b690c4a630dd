package client

import (
	"context"
	"net/url"
	"strconv"

	"github.com/custody-mem/custody"
	"github.com/custody-mem/custody/httpapi"
)

// ReviewQueue returns one page of quarantined candidates (GET /v1/review).
func (c *Client) ReviewQueue(ctx context.Context, subject, cursor string, limit int) (*httpapi.ReviewResponse, error) {
	q := url.Values{}
	if subject != "" {
		q.Set("subject", subject)
	}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	if limit != 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	return do[httpapi.ReviewResponse](ctx, c, "GET", "/v1/review", q, nil)
}

// Approve admits a quarantined candidate with authority confirmed.
func (c *Client) Approve(ctx context.Context, id, subject string) (*custody.Record, error) {
	return do[custody.Record](ctx, c, "POST", idPath("/v1/review/%s/approve", id), nil, httpapi.SubjectRequest{Subject: subject})
}

// Reject rejects a candidate.
func (c *Client) Reject(ctx context.Context, id string, req httpapi.RejectRequest) (*custody.Record, error) {
	return do[custody.Record](ctx, c, "POST", idPath("/v1/review/%s/reject", id), nil, req)
}

// Reevaluate decides the tenant's pending candidates again, returning the
// ids that left pending.
func (c *Client) Reevaluate(ctx context.Context, subject string) ([]string, error) {
	var r httpapi.ChangedResponse
	err := c.call(ctx, "POST", "/v1/review/reevaluate", nil, httpapi.SubjectRequest{Subject: subject}, &r)
	return r.Changed, err
}
