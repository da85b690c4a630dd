package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// upstream is one configured server and its current session: nil when it
// has not started yet or its last session ended, in which case the next
// call starts it again.
type upstream struct {
	g       *Gateway
	cfg     *Upstream
	timeout time.Duration
	client  *mcp.Client

	// over is set when an HTTP answer of the upstream was cut at
	// messageLimit, which fails its session.
	over atomic.Bool

	mu     sync.Mutex
	cs     *mcp.ClientSession
	starts int
	closed bool
	wg     sync.WaitGroup // the watchers of sessions
}

func newUpstream(g *Gateway, cfg *Upstream) *upstream {
	return &upstream{
		g: g, cfg: cfg, timeout: g.cfg.timeout(cfg),
		client: mcp.NewClient(&mcp.Implementation{Name: "custody-gateway", Version: g.opts.Version}, nil),
	}
}

// session returns the upstream's live session, starting (or restarting)
// it if it has none.
func (u *upstream) session(ctx context.Context) (*mcp.ClientSession, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return nil, errors.New("the gateway is closed")
	}
	if u.cs != nil {
		return u.cs, nil
	}
	cs, err := u.client.Connect(ctx, u.transport(), nil)
	if err != nil {
		return nil, fmt.Errorf("starting it: %w", err)
	}
	u.starts++
	if u.starts > 1 {
		u.g.opts.Logger.Info("gateway: upstream started again", "upstream", u.cfg.Name, "starts", u.starts)
	}
	u.cs = cs
	u.wg.Add(1)
	go u.watch(cs)
	return cs, nil
}

// watch reports the end of a session that the gateway did not close, and
// forgets it so that the next call starts the upstream again.
func (u *upstream) watch(cs *mcp.ClientSession) {
	defer u.wg.Done()
	err := cs.Wait()
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.cs != cs {
		return
	}
	u.cs = nil
	if !u.closed {
		u.g.opts.Logger.Warn("gateway: upstream stopped; it is started again on the next call", "upstream", u.cfg.Name, "err", err)
	}
}

// lost reports whether err ended session cs, and forgets cs if so.
func (u *upstream) lost(cs *mcp.ClientSession, err error) bool {
	if !errors.Is(err, mcp.ErrConnectionClosed) && !errors.Is(err, mcp.ErrSessionMissing) && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return false
	}
	u.mu.Lock()
	mine := u.cs == cs
	if mine {
		u.cs = nil
	}
	u.mu.Unlock()
	if mine {
		cs.Close() // its watcher ends with it
	}
	return true
}

func (u *upstream) transport() mcp.Transport {
	if u.cfg.URL != "" {
		base := u.g.opts.HTTPClient
		if base == nil {
			base = &http.Client{}
		}
		hc := *base
		hc.Transport = headerTransport{base: base.Transport, headers: u.cfg.Headers, limit: messageLimit(u.g.cfg), over: &u.over}
		return &mcp.StreamableClientTransport{Endpoint: u.cfg.URL, HTTPClient: &hc, MaxRetries: 1}
	}
	cmd := exec.Command(u.cfg.Command[0], u.cfg.Command[1:]...)
	cmd.Dir = u.cfg.Dir
	cmd.Stderr = u.g.opts.Stderr
	if len(u.cfg.Env) > 0 {
		cmd.Env = os.Environ()
		for k, v := range u.cfg.Env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	return &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
}

func (u *upstream) close() error {
	u.mu.Lock()
	u.closed = true
	cs := u.cs
	u.cs = nil
	u.mu.Unlock()
	var err error
	if cs != nil {
		err = cs.Close()
	}
	u.wg.Wait()
	return err
}

// messageLimit bounds what the gateway reads of one answer of an HTTP
// upstream (a POST's body), so that a huge answer cannot exhaust memory;
// an answer under it that holds a result over the result limit gets the
// plainer error of Gateway.Call. Stdio messages are bounded by the SDK's
// line limit (mcp.DefaultMaxLineLength).
func messageLimit(c *Config) int64 { return 4*int64(c.maxResult()) + 1<<20 }

// headerTransport adds the configured headers to every request and bounds
// the bodies of the answers to POSTs.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
	limit   int64
	over    *atomic.Bool
}

// limitedBody fails a read past its limit and reports it.
type limitedBody struct {
	io.ReadCloser
	left int64
	over *atomic.Bool
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		b.over.Store(true)
		return 0, errTooLarge
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

var errTooLarge = errors.New("the upstream's answer is larger than the gateway reads")

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	if len(t.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range t.headers {
			r.Header.Set(k, v)
		}
	}
	resp, err := base.RoundTrip(r)
	if err == nil && r.Method == http.MethodPost && t.limit > 0 {
		resp.Body = &limitedBody{ReadCloser: resp.Body, left: t.limit, over: t.over}
	}
	return resp, err
}
