// Package client is a small Go client for custody's HTTP API (package
// httpapi): one method per route, the same request and response types the
// server uses, and errors that carry the answer's status, code and message.
//
//	c := client.New("http://127.0.0.1:8765", os.Getenv("CUSTODY_TOKEN"))
//	d, err := c.Remember(ctx, httpapi.MemoryRequest{Namespace: "profile", Class: "fact", Body: "...", Channel: "user"})
//	if errors.Is(err, custody.ErrForbidden) { ... }
//
// The CLI's client verbs (custody remember, recall, search, review, lineage,
// gate) are built on it.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/custody-mem/custody"
	"github.com/custody-mem/custody/httpapi"
)

// DefaultTimeout bounds one call when the Client's HTTPClient is the default.
const DefaultTimeout = 30 * time.Second

// maxAnswer bounds how much of an answer the client reads.
const maxAnswer = 64 << 20

// Client calls one custody server with one principal's token. It is safe
// for concurrent use.
type Client struct {
	base  string
	token string
	// HTTPClient sends the requests; New sets one with DefaultTimeout.
	HTTPClient *http.Client
	// RateLimitRetries is how many times a request answered 429 is sent
	// again, each after the Retry-After the server gave (at most
	// maxRetryWait). custody answers 429 when the principal is over its
	// rate, before it does anything with the request, so sending it again
	// is safe. New sets DefaultRateLimitRetries; 0 returns the 429's
	// *Error at once.
	RateLimitRetries int
}

// DefaultRateLimitRetries is how many times New's client sends again a
// request answered 429.
const DefaultRateLimitRetries = 2

// maxRetryWait is the longest a rate-limited request waits before it is
// sent again.
const maxRetryWait = 30 * time.Second

// New returns a client of the server at baseURL (such as
// "http://127.0.0.1:8765") authenticating with token.
func New(baseURL, token string) *Client {
	return &Client{base: strings.TrimRight(baseURL, "/"), token: token, HTTPClient: &http.Client{Timeout: DefaultTimeout}, RateLimitRetries: DefaultRateLimitRetries}
}

// Error is an error answer of the server.
type Error struct {
	Status  int    // the HTTP status
	Code    string // the stable error code, e.g. "not_found"
	Message string
	Field   string        // the offending input field, if the server named one
	Retry   time.Duration // Retry-After, for 429 and 503
}

func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s (%d %s, field %s)", e.Message, e.Status, e.Code, e.Field)
	}
	return fmt.Sprintf("%s (%d %s)", e.Message, e.Status, e.Code)
}

// Is lets errors.Is match the domain's sentinel errors, so code written
// against custody.Service works against a remote server too.
func (e *Error) Is(target error) bool {
	switch e.Code {
	case "not_found":
		return target == custody.ErrNotFound
	case "invalid_input", "invalid_json", "unknown_field", "body_too_large":
		return target == custody.ErrInvalid
	case "unauthenticated":
		return target == custody.ErrUnauthenticated
	case "forbidden":
		return target == custody.ErrForbidden
	case "subject_not_allowed":
		return target == custody.ErrSubjectNotAllowed
	case "conflict":
		return target == custody.ErrConflict
	case "admission_undecidable":
		return target == custody.ErrUndecidable
	case "unavailable", "timeout":
		return target == custody.ErrUnavailable
	}
	return false
}

// call sends one request. in is sent as JSON unless nil ([]byte is sent as
// text/plain); a 2xx answer is decoded into out unless out is nil.
func (c *Client) call(ctx context.Context, method, path string, query url.Values, in, out any) error {
	u := c.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var payload []byte
	ctype := ""
	switch v := in.(type) {
	case nil:
	case []byte:
		payload, ctype = v, "text/plain; charset=utf-8"
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("custody client: encoding the request: %w", err)
		}
		payload, ctype = b, "application/json"
	}
	var res *http.Response
	var b []byte
	for attempt := 0; ; attempt++ {
		var err error
		if res, b, err = c.send(ctx, method, u, ctype, in != nil, payload); err != nil {
			return fmt.Errorf("custody client: %s %s: %w", method, path, err)
		}
		if res.StatusCode != http.StatusTooManyRequests || attempt >= c.RateLimitRetries {
			break
		}
		wait := retryWait(res.Header.Get("Retry-After"))
		select {
		case <-ctx.Done():
			return fmt.Errorf("custody client: %s %s: waiting out the rate limit: %w", method, path, ctx.Err())
		case <-time.After(wait):
		}
	}
	if res.StatusCode/100 != 2 {
		return answerError(res, b)
	}
	if out == nil {
		return nil
	}
	if raw, ok := out.(*[]byte); ok {
		*raw = b
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("custody client: decoding the answer of %s %s: %w", method, path, err)
	}
	return nil
}

// send sends one request and reads its answer.
func (c *Client) send(ctx context.Context, method, u, ctype string, hasBody bool, payload []byte) (*http.Response, []byte, error) {
	var body io.Reader
	if hasBody {
		body = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, nil, err
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	res, err := c.HTTPClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, maxAnswer))
	if err != nil {
		return nil, nil, fmt.Errorf("reading the answer: %w", err)
	}
	return res, b, nil
}

// retryWait is how long to wait before sending again a request answered
// 429 with this Retry-After (seconds; 1 s when absent or unreadable).
func retryWait(retryAfter string) time.Duration {
	s, err := strconv.Atoi(strings.TrimSpace(retryAfter))
	if err != nil || s < 0 {
		return time.Second
	}
	return min(time.Duration(s)*time.Second, maxRetryWait)
}

func answerError(res *http.Response, b []byte) error {
	e := &Error{Status: res.StatusCode}
	if s, err := strconv.Atoi(res.Header.Get("Retry-After")); err == nil {
		e.Retry = time.Duration(s) * time.Second
	}
	var eb httpapi.ErrorBody
	if json.Unmarshal(b, &eb) == nil && eb.Error.Code != "" {
		e.Code, e.Message, e.Field = eb.Error.Code, eb.Error.Message, eb.Error.Field
		return e
	}
	e.Code = "http_" + strconv.Itoa(res.StatusCode)
	e.Message = strings.TrimSpace(string(b))
	if len(e.Message) > 200 {
		e.Message = e.Message[:200] + "…"
	}
	if e.Message == "" {
		e.Message = http.StatusText(res.StatusCode)
	}
	return e
}

// IsStatus reports whether err is an error answer with the given status.
func IsStatus(err error, status int) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == status
}

func idPath(format, id string) string { return fmt.Sprintf(format, url.PathEscape(id)) }

func subjectQuery(subject string) url.Values {
	if subject == "" {
		return nil
	}
	return url.Values{"subject": {subject}}
}

// do is call for a typed answer: nil on error.
func do[T any](ctx context.Context, c *Client, method, path string, query url.Values, in any) (*T, error) {
	var v T
	if err := c.call(ctx, method, path, query, in, &v); err != nil {
		return nil, err
	}
	return &v, nil
}
