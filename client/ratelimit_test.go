package client_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/custody-mem/custody"
	"github.com/custody-mem/custody/client"
	"github.com/custody-mem/custody/httpapi"
)

// statuses is an http.RoundTripper that keeps the status of every answer.
type statuses struct {
	mu  sync.Mutex
	got []int
}

func (s *statuses) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := http.DefaultTransport.RoundTrip(req)
	if err == nil {
		s.mu.Lock()
		s.got = append(s.got, res.StatusCode)
		s.mu.Unlock()
	}
	return res, err
}

func (s *statuses) count(status int) (n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range s.got {
		if x == status {
			n++
		}
	}
	return n
}

// A principal over its rate (one request a second, a burst of one):
// with RateLimitRetries 0 the client returns the 429 with its wait; by
// default it waits the Retry-After and sends the write again, and every
// write is made once; an answer other than 429 is never sent again.
func TestRateLimitedRequestsWaitTheirTurn(t *testing.T) {
	ctx := context.Background()
	url, principal := serverWith(t, httpapi.Options{RatePerSecond: 1, RateBurst: 1})
	tok := principal("alice", []string{"user"}, "user")
	counted := func(retries int) (*client.Client, *statuses) {
		c := client.New(url, tok)
		st := &statuses{}
		c.HTTPClient = &http.Client{Transport: st, Timeout: client.DefaultTimeout}
		c.RateLimitRetries = retries
		return c, st
	}
	note := func(body string) httpapi.MemoryRequest {
		return httpapi.MemoryRequest{Namespace: "n", Class: "fact", Body: body, Channel: "user"}
	}

	c, st := counted(0)
	c.Remember(ctx, note("first")) // spends the burst, if the bucket was full
	_, err := c.Remember(ctx, note("over the rate"))
	var e *client.Error
	if !errors.As(err, &e) || e.Status != http.StatusTooManyRequests || e.Retry < time.Second {
		t.Fatalf("a write over the rate with retries off = %v, want a 429 with a wait of 1 s or more", err)
	}
	if n := st.count(http.StatusTooManyRequests); n != 1 {
		t.Fatalf("retries off sent the 429's request %d times, want once", n)
	}

	c, st = counted(client.DefaultRateLimitRetries)
	var ids []string
	for _, body := range []string{"one", "two", "three"} {
		d, err := c.Remember(ctx, note(body))
		if err != nil || d.State != custody.StateAdmitted {
			t.Fatalf("remember %q over the rate with retries = %+v, %v", body, d, err)
		}
		ids = append(ids, d.ID)
	}
	if st.count(http.StatusTooManyRequests) == 0 {
		t.Fatalf("no request met the limit (%v): the test measured nothing", st.got)
	}
	if n := st.count(http.StatusCreated) + st.count(http.StatusOK); n != 3 {
		t.Errorf("%d writes answered in force, want each of 3 once (%v)", n, st.got)
	}
	page, err := c.List(ctx, client.ListOptions{Namespace: "n"})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if !slices.ContainsFunc(page.Items, func(r *custody.Record) bool { return r.ID == id }) {
			t.Errorf("write %s is not in the store", id)
		}
	}

	time.Sleep(1100 * time.Millisecond) // a token for the next request
	c, st = counted(client.DefaultRateLimitRetries)
	if _, err := c.Search(ctx, httpapi.SearchRequest{Query: "x", Limit: 101}); !errors.As(err, &e) || e.Status != http.StatusBadRequest {
		t.Fatalf("a search over the limit = %v, want 400", err)
	}
	if len(st.got) != 1 {
		t.Errorf("a 400 was sent %d times (%v), want once", len(st.got), st.got)
	}
}
