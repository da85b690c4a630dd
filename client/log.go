package client

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/custody-mem/custody/httpapi"
	"github.com/custody-mem/custody/tlog"
)

// Checkpoint returns the signed checkpoint of the log of the caller's
// tenant, a C2SP signed note (GET /v1/log/checkpoint). Each tenant's log
// is a tree of its own, with its own origin.
func (c *Client) Checkpoint(ctx context.Context) ([]byte, error) {
	var note []byte
	if err := c.call(ctx, "GET", "/v1/log/checkpoint", nil, nil, &note); err != nil {
		return nil, err
	}
	return note, nil
}

// LogKey returns the verifier key of the checkpoints of tenant's log, a
// C2SP signed-note vkey line named by the log's origin (GET
// /v1/log/key?tenant=, served without a token). Pin it from a source you
// trust, not from the server you are checking.
func (c *Client) LogKey(ctx context.Context, tenant string) (string, error) {
	var key []byte
	if err := c.call(ctx, "GET", "/v1/log/key", url.Values{"tenant": {tenant}}, nil, &key); err != nil {
		return "", err
	}
	return strings.TrimSpace(string(key)), nil
}

// InclusionProof proves that leaf index of the caller's tenant's log is in
// its tree of size.
func (c *Client) InclusionProof(ctx context.Context, index, size uint64) (*httpapi.InclusionProofResponse, error) {
	q := url.Values{"index": {strconv.FormatUint(index, 10)}, "size": {strconv.FormatUint(size, 10)}}
	return do[httpapi.InclusionProofResponse](ctx, c, "GET", "/v1/log/proof/inclusion", q, nil)
}

// ConsistencyProof proves that the tree of size from is a prefix of the
// tree of size to.
func (c *Client) ConsistencyProof(ctx context.Context, from, to uint64) (*httpapi.ConsistencyProofResponse, error) {
	q := url.Values{"from": {strconv.FormatUint(from, 10)}, "to": {strconv.FormatUint(to, 10)}}
	return do[httpapi.ConsistencyProofResponse](ctx, c, "GET", "/v1/log/proof/consistency", q, nil)
}

// LogEntries returns the entries in [start, end) of the caller's tenant's
// log (at most 1000 per call). Entries the caller may not read (another
// user's records, principals) come redacted: only Index and LeafHash are set, and
// Redacted reports it. Either kind proves its inclusion with
// VerifyInclusion.
func (c *Client) LogEntries(ctx context.Context, start, end uint64) ([]httpapi.LogEntry, error) {
	q := url.Values{"start": {strconv.FormatUint(start, 10)}, "end": {strconv.FormatUint(end, 10)}}
	r, err := do[httpapi.LogEntriesResponse](ctx, c, "GET", "/v1/log/entries", q, nil)
	if err != nil {
		return nil, err
	}
	return r.Entries, nil
}

// VerifyInclusion fetches the proof that e is in the tree of cp (a
// checkpoint the caller has opened and checked, see tlog.OpenCheckpoint)
// and verifies it against cp's root. It works the same for a redacted
// entry, by its leaf hash, and for a full one, whose leaf must hash to it.
func (c *Client) VerifyInclusion(ctx context.Context, e httpapi.LogEntry, cp tlog.Checkpoint) error {
	h, err := e.Hash()
	if err != nil {
		return err
	}
	p, err := c.InclusionProof(ctx, e.Index, cp.Size)
	if err != nil {
		return err
	}
	proof := make([][]byte, len(p.Hashes))
	for i, s := range p.Hashes {
		if proof[i], err = base64.StdEncoding.DecodeString(s); err != nil {
			return fmt.Errorf("inclusion proof of entry %d: hash %d is not base64: %w", e.Index, i, err)
		}
	}
	return tlog.VerifyInclusion(h, e.Index, cp.Size, proof, cp.Root)
}

// InclusionProofs proves that each leaf of indexes (at most 1000) is in
// the tree of size, in one request: one proof per index, in order.
func (c *Client) InclusionProofs(ctx context.Context, indexes []uint64, size uint64) (*httpapi.InclusionProofsResponse, error) {
	return do[httpapi.InclusionProofsResponse](ctx, c, "POST", "/v1/log/proofs", nil, httpapi.InclusionProofsRequest{Indexes: indexes, Size: size})
}
