package client

import (
	"context"
	"net/url"
	"strconv"

	"github.com/custody-mem/custody"
	"github.com/custody-mem/custody/httpapi"
)

// Remember submits a candidate (POST /v1/memories). Both an admitted and a
// held candidate are successes: look at the decision's State.
func (c *Client) Remember(ctx context.Context, req httpapi.MemoryRequest) (*custody.Decision, error) {
	return do[custody.Decision](ctx, c, "POST", "/v1/memories", nil, req)
}

// Batch submits up to custody.MaxBatch candidates of one caller in one
// request (POST /v1/memories/batch): each is decided on its own, all
// commit together, and the decisions come back in the order of the items.
// One bad item refuses the whole batch; the error's Field names it
// (items[3].namespace).
func (c *Client) Batch(ctx context.Context, req httpapi.BatchRequest) ([]*custody.Decision, error) {
	r, err := do[httpapi.BatchResponse](ctx, c, "POST", "/v1/memories/batch", nil, req)
	if err != nil {
		return nil, err
	}
	return r.Items, nil
}

// BatchStates is Batch for bulk imports: it decodes only the state of each
// decision, in the order of the items. Decoding whole decisions, receipts
// and all, costs the client more than deciding them costs the server.
func (c *Client) BatchStates(ctx context.Context, req httpapi.BatchRequest) ([]custody.State, error) {
	r, err := do[batchStates](ctx, c, "POST", "/v1/memories/batch", nil, req)
	if err != nil {
		return nil, err
	}
	out := make([]custody.State, len(r.Items))
	for i, d := range r.Items {
		out[i] = d.State
	}
	return out, nil
}

// batchStates is the part of httpapi.BatchResponse that BatchStates reads.
type batchStates struct {
	Items []struct {
		State custody.State `json:"state"`
	} `json:"items"`
}

// Get returns one eligible record (GET /v1/memories/{id}).
func (c *Client) Get(ctx context.Context, id, subject string) (*custody.Record, error) {
	return do[custody.Record](ctx, c, "GET", idPath("/v1/memories/%s", id), subjectQuery(subject), nil)
}

// ListOptions filter List; zero fields do not filter.
type ListOptions struct {
	Namespace, Key, Class, Subject string
	// NamespacePrefix keeps this namespace and those below it; it excludes
	// Namespace.
	NamespacePrefix string
	// KeyPrefix keeps the keyed records whose key starts with it; it
	// excludes Key.
	KeyPrefix string
	// CreatedAfter and CreatedBefore are RFC 3339 times: only records
	// created strictly after, and strictly before, them.
	CreatedAfter, CreatedBefore string
	// Metadata keeps the records whose metadata has every one of these
	// keys with exactly this value.
	Metadata map[string]string
	Limit    int
	Cursor   string
}

func (o ListOptions) query() url.Values {
	q := url.Values{}
	for k, v := range map[string]string{"namespace": o.Namespace, "namespace_prefix": o.NamespacePrefix, "key": o.Key, "class": o.Class, "subject": o.Subject, "cursor": o.Cursor,
		"key_prefix": o.KeyPrefix, "created_after": o.CreatedAfter, "created_before": o.CreatedBefore} {
		if v != "" {
			q.Set(k, v)
		}
	}
	for k, v := range o.Metadata {
		q.Set("metadata."+k, v)
	}
	if o.Limit != 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	return q
}

// List returns one page of eligible records (GET /v1/memories).
func (c *Client) List(ctx context.Context, o ListOptions) (*httpapi.ListResponse, error) {
	return do[httpapi.ListResponse](ctx, c, "GET", "/v1/memories", o.query(), nil)
}

// Search ranks eligible records against plain text (POST /v1/search).
func (c *Client) Search(ctx context.Context, req httpapi.SearchRequest) (*httpapi.SearchResponse, error) {
	return do[httpapi.SearchResponse](ctx, c, "POST", "/v1/search", nil, req)
}

// History returns the versions of a keyed record (GET /v1/memories/{id}/history).
func (c *Client) History(ctx context.Context, id, subject string) ([]*custody.Record, error) {
	var r httpapi.HistoryResponse
	err := c.call(ctx, "GET", idPath("/v1/memories/%s/history", id), subjectQuery(subject), nil, &r)
	return r.Items, err
}

// Lineage returns a record's ancestors and descendants (GET /v1/memories/{id}/lineage).
func (c *Client) Lineage(ctx context.Context, id, subject string) (*custody.Lineage, error) {
	return do[custody.Lineage](ctx, c, "GET", idPath("/v1/memories/%s/lineage", id), subjectQuery(subject), nil)
}

// Confirm is the owner's confirmation of a pending_confirmation write
// (POST /v1/memories/{id}/confirm).
func (c *Client) Confirm(ctx context.Context, id, subject string) (*custody.Record, error) {
	return do[custody.Record](ctx, c, "POST", idPath("/v1/memories/%s/confirm", id), nil, httpapi.SubjectRequest{Subject: subject})
}

// Quarantine withdraws a record for review and suspends its descendants,
// returning the affected ids.
func (c *Client) Quarantine(ctx context.Context, id string, req httpapi.QuarantineRequest) ([]string, error) {
	var r httpapi.AffectedResponse
	err := c.call(ctx, "POST", idPath("/v1/memories/%s/quarantine", id), nil, req, &r)
	return r.Affected, err
}

// Retire withdraws a record for good (optionally erasing its body) and
// suspends its descendants, returning the affected ids.
func (c *Client) Retire(ctx context.Context, id string, req httpapi.RetireRequest) ([]string, error) {
	var r httpapi.AffectedResponse
	err := c.call(ctx, "POST", idPath("/v1/memories/%s/retire", id), nil, req, &r)
	return r.Affected, err
}

// Rebuild re-admits a suspended derived record from its parents, returning
// the affected ids.
func (c *Client) Rebuild(ctx context.Context, id string, req httpapi.RebuildRequest) ([]string, error) {
	var r httpapi.AffectedResponse
	err := c.call(ctx, "POST", idPath("/v1/memories/%s/rebuild", id), nil, req, &r)
	return r.Affected, err
}

// Health checks that the server is up (GET /healthz).
func (c *Client) Health(ctx context.Context) error {
	var r httpapi.HealthResponse
	return c.call(ctx, "GET", "/healthz", nil, nil, &r)
}
