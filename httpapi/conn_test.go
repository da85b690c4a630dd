package httpapi

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
)

// hangGuard bounds how long a test waits for the server before calling it
// stuck; it fails tests, it never times anything.
const hangGuard = 20 * time.Second

// serveConns replaces e's test server by the http.Server and listener the
// API builds (HTTPServer and Listener), with their timeouts and cap.
func (e *env) serveConns(t *testing.T) {
	t.Helper()
	e.srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(nil)
	ts.Listener.Close()
	ts.Listener, ts.Config = e.api.Listener(ln), e.api.HTTPServer()
	ts.Start()
	t.Cleanup(ts.Close)
	e.srv = ts
}

// dial opens a raw connection to e's server.
func (e *env) dial(t *testing.T) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(e.srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(hangGuard))
	t.Cleanup(func() { c.Close() })
	return c
}

// roundTrip writes a raw request on c and reads its answer whole.
func roundTrip(c net.Conn, br *bufio.Reader, req string) (*http.Response, string, error) {
	if _, err := io.WriteString(c, req); err != nil {
		return nil, "", err
	}
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		return nil, "", err
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	return res, string(b), err
}

// startSlowBody opens a connection that sends a request's headers and the
// first bytes of its body, and never the rest.
func (e *env) startSlowBody(t *testing.T, token string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c := e.dial(t)
	fmt.Fprintf(c, "POST /v1/memories HTTP/1.1\r\nHost: custody\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: 200\r\n\r\n{\"namespace\":", token)
	return c, bufio.NewReader(c)
}

// TestCutBodyOfATokenRevokedMeanwhile: a write authenticated from the
// server's cache, whose token is revoked while its body arrives and whose
// body then ends early, is answered 401, as any write of a token revoked
// meanwhile, though the server ended the request's context when the read
// failed. Its twin, a token nobody changed, gets the 400 of the cut body.
// The client cuts the body itself (it closes its side), after the server
// has authenticated the request: the order is what the test observes.
func TestCutBodyOfATokenRevokedMeanwhile(t *testing.T) {
	for _, revoke := range []bool{false, true} {
		t.Run(fmt.Sprintf("revoked=%t", revoke), func(t *testing.T) {
			e := newEnv(t, Options{RatePerSecond: -1})
			e.serveConns(t)
			e.principal("acme", "root", []string{"admin"})
			alice := e.principal("acme", "alice", []string{"user"})
			note := MemoryRequest{Namespace: "n", Class: "fact", Body: "a note", Channel: "user"}
			want(t, e.do(alice, "POST", "/v1/memories", note), http.StatusCreated, "") // alice's principal is cached now
			before := e.count("acme")
			hits := e.svc.AuthCacheStats().Hits
			c, br := e.startSlowBody(t, alice)
			for deadline := time.Now().Add(hangGuard); e.svc.AuthCacheStats().Hits == hits; time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the server never authenticated the request from its cache")
				}
			}
			if revoke {
				if _, err := e.svc.RevokePrincipal(e.ctx, custody.PrincipalAdmin{Tenant: "acme", By: "acme/root"}, "alice", "left"); err != nil {
					t.Fatal(err)
				}
			}
			if err := c.(*net.TCPConn).CloseWrite(); err != nil {
				t.Fatal(err)
			}
			res, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("the cut body was not answered: %v", err)
			}
			b, _ := io.ReadAll(res.Body)
			if want := map[bool]int{false: http.StatusBadRequest, true: http.StatusUnauthorized}[revoke]; res.StatusCode != want {
				t.Fatalf("cut body answered %d %s; want %d", res.StatusCode, b, want)
			}
			if n := e.count("acme"); n != before {
				t.Errorf("%d records after the cut body, %d before: it wrote", n, before)
			}
		})
	}
}

// TestSlowBodyIsCut: a request body that stops arriving is cut by the read
// timeout (408, then the connection closes) and nothing is written, while
// a normal client is served before and after.
func TestSlowBodyIsCut(t *testing.T) {
	e := newEnv(t, Options{ReadTimeout: 200 * time.Millisecond, RatePerSecond: -1})
	e.serveConns(t)
	alice := e.principal("acme", "alice", []string{"user"})
	before := e.count("acme")

	slow, br := e.startSlowBody(t, alice)
	note := MemoryRequest{Namespace: "n", Class: "fact", Body: "served", Channel: "user"}
	want(t, e.do(alice, "POST", "/v1/memories", note), http.StatusCreated, "")

	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("the slow body was not answered: %v", err)
	}
	b, _ := io.ReadAll(res.Body)
	if r := (resp{status: res.StatusCode, body: b}); r.status != http.StatusRequestTimeout || r.errCode() != "request_timeout" {
		t.Fatalf("slow body answered %d %s, want 408 request_timeout", r.status, b)
	}
	if n, err := br.ReadByte(); err == nil {
		t.Fatalf("the connection stayed open after the cut (read %q)", n)
	}
	slow.Close()
	want(t, e.do(alice, "POST", "/v1/memories", note), http.StatusCreated, "")
	if got, want := e.count("acme"), before+2; got != want {
		t.Fatalf("records: %d, want %d (the cut request must write nothing)", got, want)
	}
}

// TestConnCapPerAddr: with a cap of 2, a third connection from the same
// address is refused while two are open, and served once one has closed.
func TestConnCapPerAddr(t *testing.T) {
	e := newEnv(t, Options{MaxConnsPerAddr: 2, RatePerSecond: -1})
	e.serveConns(t)
	const get = "GET /healthz HTTP/1.1\r\nHost: custody\r\n\r\n"
	const getClose = "GET /healthz HTTP/1.1\r\nHost: custody\r\nConnection: close\r\n\r\n"
	served := func(c net.Conn, br *bufio.Reader, req string) {
		t.Helper()
		res, body, err := roundTrip(c, br, req)
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("a connection within the cap was not served: %v %v %s", err, res, body)
		}
	}
	c1, c2 := e.dial(t), e.dial(t)
	b1, b2 := bufio.NewReader(c1), bufio.NewReader(c2)
	served(c1, b1, get)
	served(c2, b2, get)

	c3 := e.dial(t)
	if res, body, err := roundTrip(c3, bufio.NewReader(c3), get); err == nil {
		t.Fatalf("the third connection was served (%d %s) while two were open", res.StatusCode, body)
	}

	served(c1, b1, getClose) // the server closes c1 after this answer
	if _, err := b1.ReadByte(); err == nil {
		t.Fatal("the server kept a Connection: close connection open")
	}
	c4 := e.dial(t)
	served(c4, bufio.NewReader(c4), get)
	served(c2, b2, get)
}

// TestStreamOutlivesTimeouts: a mounted event stream keeps working past the
// read and write timeouts that cut a slow body, whether a GET opened it
// (Accept: text/event-stream) or a POST's answer streams; a GET stream is
// counted but not timed in the latency histogram, a plain GET of the same
// route is timed.
func TestStreamOutlivesTimeouts(t *testing.T) {
	for _, method := range []string{"GET", "POST"} {
		t.Run(method, func(t *testing.T) { testStreamOutlivesTimeouts(t, method) })
	}
}

func testStreamOutlivesTimeouts(t *testing.T, method string) {
	e := newEnv(t, Options{ReadTimeout: 200 * time.Millisecond, WriteTimeout: 200 * time.Millisecond, RatePerSecond: -1})
	next := make(chan struct{})
	e.api.Mount("/stream", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "GET" && !isStreamRequest(r) {
			writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
			return
		}
		if _, err := io.ReadAll(r.Body); err != nil {
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: ready\n\n")
		http.NewResponseController(w).Flush()
		select {
		case <-next:
		case <-r.Context().Done():
			return
		}
		fmt.Fprint(w, "data: after\n\n")
	}))
	e.serveConns(t)
	alice := e.principal("acme", "alice", []string{"user"})

	c := e.dial(t)
	if method == "GET" {
		fmt.Fprintf(c, "GET /stream HTTP/1.1\r\nHost: custody\r\nAuthorization: Bearer %s\r\nAccept: text/event-stream\r\n\r\n", alice)
	} else {
		fmt.Fprintf(c, "POST /stream HTTP/1.1\r\nHost: custody\r\nAuthorization: Bearer %s\r\nContent-Length: 2\r\n\r\n{}", alice)
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("opening the stream: %v %v", err, res)
	}
	events := bufio.NewReader(res.Body)
	if line, err := events.ReadString('\n'); err != nil || line != "data: ready\n" {
		t.Fatalf("first event %q, %v", line, err)
	}

	// A slow body opened after the stream is cut by the same timeouts: by
	// then they have passed for the stream too.
	_, br := e.startSlowBody(t, alice)
	if r, err := http.ReadResponse(br, nil); err == nil && r.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("slow body answered %d, want 408", r.StatusCode)
	}
	close(next)
	rest, err := io.ReadAll(events)
	if err != nil || !strings.Contains(string(rest), "data: after\n") {
		t.Fatalf("the stream was cut by the timeouts: %q, %v", rest, err)
	}
	if method != "GET" {
		return
	}
	want(t, e.do(alice, "GET", "/stream", nil), http.StatusOK, "")
	metrics := e.do("", "GET", "/metrics", nil).String()
	for _, line := range []string{
		`custody_http_requests_total{code="200",method="GET",route="/stream"} 2`,
		`custody_http_request_duration_seconds_count{route="/stream"} 1`,
	} {
		if !strings.Contains(metrics, line) {
			t.Errorf("metrics lack %s", line)
		}
	}
}
