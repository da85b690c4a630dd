package httpapi

import (
	"log/slog"
	"net"
	"sync"
)

// connLimit is a net.Listener that lets each client address (the IP, any
// port) hold at most max connections open at once. A connection beyond the
// cap is closed as soon as it is accepted, without an answer: the client
// sees its connection reset or closed and may retry once one of its other
// connections ends. Refusing rather than queueing is deliberate: a queued
// connection still holds a socket and a goroutine, which is what the cap
// bounds. A connection stops counting as soon as the server half-closes or
// closes it.
type connLimit struct {
	net.Listener
	max int
	log *slog.Logger

	mu    sync.Mutex
	open  map[string]int
	noted map[string]bool // addresses already warned about, until their count drops to zero
}

// limitConns wraps ln with the per-address cap max.
func limitConns(ln net.Listener, max int, log *slog.Logger) net.Listener {
	return &connLimit{Listener: ln, max: max, log: log, open: map[string]int{}, noted: map[string]bool{}}
}

// Accept returns the next connection within its address's cap, closing the
// ones beyond it.
func (l *connLimit) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		addr := clientAddr(c.RemoteAddr())
		l.mu.Lock()
		ok := l.open[addr] < l.max
		warn := !ok && !l.noted[addr]
		if ok {
			l.open[addr]++
		} else {
			l.noted[addr] = true
		}
		l.mu.Unlock()
		if ok {
			return &limitedConn{Conn: c, release: func() { l.release(addr) }}, nil
		}
		if warn {
			l.log.Warn("refusing connections beyond the per-address cap", "addr", addr, "max", l.max,
				"fix", "raise serve --max-conns-per-addr if this client is legitimate")
		}
		c.Close()
	}
}

func (l *connLimit) release(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[addr]--; l.open[addr] <= 0 {
		delete(l.open, addr)
		delete(l.noted, addr)
	}
}

// clientAddr is the part of a remote address that identifies the client:
// the IP of a TCP address, else the whole address.
func clientAddr(a net.Addr) string {
	if host, _, err := net.SplitHostPort(a.String()); err == nil {
		return host
	}
	return a.String()
}

// limitedConn gives its slot back when it is closed or half-closed, once.
type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}

// CloseWrite half-closes the connection when the underlying one can, as
// net/http does before closing a connection whose request body it left
// unread (so the client reads the answer instead of a reset).
func (c *limitedConn) CloseWrite() error {
	c.once.Do(c.release)
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Conn.Close()
}
