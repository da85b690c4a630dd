package httpapi

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/custody-mem/custody"
	"github.com/custody-mem/custody/mcpserver"
	"github.com/custody-mem/custody/mem0api"
)

// stream sends a batch whose body is what the test writes into the
// returned pipe, as it writes it (chunked), and delivers the answer on the
// returned channel. The test closes the pipe when it is done with it.
func (e *env) stream(t testing.TB, token string) (*io.PipeWriter, <-chan resp) {
	t.Helper()
	pr, pw := io.Pipe()
	req, err := http.NewRequestWithContext(e.ctx, "POST", e.srv.URL+"/v1/memories/batch", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	out := make(chan resp, 1)
	go func() {
		res, err := e.srv.Client().Do(req)
		if err != nil {
			out <- resp{status: -1, body: []byte(err.Error())}
			return
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		out <- resp{status: res.StatusCode, header: res.Header, body: b}
	}()
	return pw, out
}

// A batch is checked as it arrives: an item that fails its checks is
// answered at once, while the rest of the body has not been sent, with the
// error naming it, and nothing is written. So is an item larger than one
// write, after at most that much of it and a read more, and an item past
// the thousandth. The twin: the same batch, ended, is taken.
func TestBatchRefusedAsItArrives(t *testing.T) {
	e := newEnv(t, Options{})
	alice := e.principal("acme", "alice", []string{"user"})
	good := `{"namespace":"n","class":"fact","body":"fine","channel":"user"}`
	for _, tc := range []struct {
		name, head  string
		more        string // then written over and over, 1.5 MiB of it, and the body left open
		status      int
		code, field string
	}{
		{"an item that does not decode", `{"items":[` + good + `,{"namespace":"n","class":5}`, "", 400, "invalid_json", "items[1].class"},
		{"an item that fails its checks", `{"items":[` + good + `,{"namespace":"n","class":"fact","body":"x","channel":"user","expires_at":"soon"}`, "", 400, "invalid_input", "items[1].expires_at"},
		{"a field that is not text", `{"items":[` + good + `,{"namespace":"n","class":"fact","body":"\ud800","channel":"user"}`, "", 400, "invalid_input", "items[1].body"},
		{"a body past the service's limit", `{"items":[` + good + `,{"namespace":"n","class":"fact","channel":"user","body":"` + strings.Repeat("y", custody.DefaultMaxBodyBytes+1) + `"}`, "", 400, "invalid_input", "items[1].body"},
		{"an item larger than one write", `{"items":[` + good + `,{"namespace":"n","class":"fact","channel":"user","body":"`, strings.Repeat("x", 4<<10), 413, "body_too_large", "items[1]"},
		{"an item past the thousandth", `{"items":[` + strings.Repeat(good+",", custody.MaxBatch) + good, "", 400, "invalid_input", "items"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			size, n := e.logSize(), e.count("acme")
			pw, answer := e.stream(t, alice)
			go func() {
				if _, err := io.WriteString(pw, tc.head); err != nil || tc.more == "" {
					return
				}
				// An item that does not end: the answer must come after
				// at most the limit of one write and a read of it.
				for range (3 << 19) / len(tc.more) {
					if _, err := io.WriteString(pw, tc.more); err != nil {
						return
					}
				}
			}()
			r := <-answer
			pw.Close()
			want(t, r, tc.status, tc.code)
			var b ErrorBody
			if err := json.Unmarshal(r.body, &b); err != nil || b.Error.Field != tc.field || b.Error.Message == "" {
				t.Errorf("error %+v (%v); want field %q and a message", b.Error, err, tc.field)
			}
			if e.logSize() != size || e.count("acme") != n {
				t.Errorf("a refused batch wrote: log %d -> %d, records %d -> %d", size, e.logSize(), n, e.count("acme"))
			}
		})
	}
	// The twin: a batch sent the same way, in pieces, then ended, is
	// taken; with its keys spelt in another case and the subject given
	// after the items, as encoding/json decodes a single write.
	n := e.count("acme")
	pw, answer := e.stream(t, alice)
	go func() {
		io.WriteString(pw, `{"Items":[`+good)
		for range 9 {
			io.WriteString(pw, ","+good)
		}
		io.WriteString(pw, `],"SUBJECT":"alice"}`)
		pw.Close()
	}()
	r := <-answer
	want(t, r, 200, "")
	if got := e.count("acme"); got != n+10 {
		t.Errorf("a batch of 10 sent in pieces wrote %d records", got-n)
	}
}

// batchPrefix is the start of a batch of items items of itemBody bytes
// each, without the bytes that end it (batchEnd): a server that reads it
// waits for more.
func batchPrefix(items, itemBody int) []byte {
	item := fmt.Sprintf(`{"namespace":"n","class":"fact","channel":"user","body":%q}`, strings.Repeat("w", itemBody))
	return []byte(`{"items":[` + item + strings.Repeat(","+item, items-1))
}

const batchEnd = "]}"

// The bytes of request bodies held at once are bounded by the server's
// budget, whatever the number of concurrent batches: with a budget of
// 2 MiB and 24 batches of 900 KiB each sent at once and held open before
// their last bytes, the server holds at most two of them (what it read of
// each, as counted by the budget and shown in /metrics) and answers every
// other 503 server_busy with Retry-After and a JSON error, writing nothing
// for them. The live heap while the held batches wait grows by a few
// times the budget, not by the 24 batches (about 20 MiB as bytes alone,
// twice that decoded). Waits are for what the server has read and
// answered, never for a time. The twin: the held batches, ended, are
// taken whole, and so is a batch of the same size sent afterwards.
func TestBodyBudgetBoundsConcurrentBatches(t *testing.T) {
	const (
		budget    = 2 << 20
		clients   = 24
		items     = 100
		itemBytes = 9 << 10
	)
	e := newEnv(t, Options{BodyBudget: budget, MaxBatchBytes: 1 << 20, MaxBodyBytes: 64 << 10, RatePerSecond: -1})
	alice := e.principal("acme", "alice", []string{"user"})
	prefix := batchPrefix(items, itemBytes)
	before := e.count("acme")
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)

	pipes := make([]*io.PipeWriter, clients)
	answers := make([]<-chan resp, clients)
	var wrote sync.WaitGroup
	for i := range clients {
		pipes[i], answers[i] = e.stream(t, alice)
		wrote.Go(func() { pipes[i].Write(prefix) })
	}
	// Settled: every batch was either answered (refused) or is held whole
	// by the server, waiting for its end.
	refused := map[int]resp{}
	held := 0
	for {
		for i := range clients {
			if _, done := refused[i]; done {
				continue
			}
			select {
			case r := <-answers[i]:
				refused[i] = r
			default:
			}
		}
		h := e.api.budget.Held()
		if h > budget {
			t.Fatalf("the requests hold %d bytes, past the budget of %d", h, budget)
		}
		if h%int64(len(prefix)) == 0 && len(refused)+int(h/int64(len(prefix))) == clients {
			held = int(h / int64(len(prefix)))
			break
		}
		time.Sleep(5 * time.Millisecond) // polling what the server has read, not a deadline
	}
	runtime.GC()
	var during runtime.MemStats
	runtime.ReadMemStats(&during)
	growth := int64(during.HeapAlloc) - int64(base.HeapAlloc)
	t.Logf("%d batches held, %d refused; live heap grew by %.1f MiB (budget %d MiB, %d batches of %.1f MiB sent)",
		held, len(refused), float64(growth)/(1<<20), budget>>20, clients, float64(len(prefix))/(1<<20))
	if held < 1 || held > budget/len(prefix) {
		t.Errorf("%d batches held at once; want 1 to %d (the budget over a batch)", held, budget/len(prefix))
	}
	if growth > 4*budget {
		t.Errorf("the live heap grew by %d bytes with %d batches held; want at most four times the budget (%d)", growth, held, 4*budget)
	}
	for i, r := range refused {
		if r.status != http.StatusServiceUnavailable || r.errCode() != "server_busy" || r.header.Get("Retry-After") == "" {
			t.Errorf("batch %d: %d %s (Retry-After %q); want 503 server_busy with Retry-After", i, r.status, r.body, r.header.Get("Retry-After"))
		}
	}
	metrics := e.do("", "GET", "/metrics", nil)
	want(t, metrics, 200, "")
	if got, refusals := metricValue(t, metrics.String(), "custody_http_body_bytes_held"), metricValue(t, metrics.String(), "custody_http_body_budget_refused_total"); got != float64(held*len(prefix)) || refusals < float64(len(refused)) {
		t.Errorf("/metrics shows %v bytes held and %v refusals; want %d and at least %d", got, refusals, held*len(prefix), len(refused))
	}
	// End the held batches: each is taken whole.
	for i := range clients {
		if _, done := refused[i]; done {
			pipes[i].Close()
			continue
		}
		io.WriteString(pipes[i], batchEnd)
		pipes[i].Close()
		r := <-answers[i]
		want(t, r, 200, "")
	}
	wrote.Wait()
	if got := e.count("acme") - before; got != held*items {
		t.Errorf("%d records written; want the %d items of the %d batches taken", got, held*items, held)
	}
	// Once they ended, the budget is free: a batch of the same size is taken.
	if h := e.api.budget.Held(); h != 0 {
		t.Errorf("the budget holds %d bytes after every request ended", h)
	}
	want(t, e.do(alice, "POST", "/v1/memories/batch", append(batchPrefix(items, itemBytes), batchEnd...)), 200, "")
}

// Every route that reads a body reads it against the budget: while a batch
// waiting for its end holds nearly all of it, a POST /v1/memories, a Mem0
// add (mem0api) and an MCP request (mcpserver), each mounted as custody
// serve mounts them, are answered 503 server_busy with Retry-After and the
// JSON error body, and write nothing. The twin: once the batch ended (and
// was taken), the same three requests are served.
func TestBodyBudgetOnEveryRoute(t *testing.T) {
	e := newEnv(t, Options{BodyBudget: 256 << 10, MaxBatchBytes: 256 << 10, MaxBodyBytes: 64 << 10, RatePerSecond: -1})
	m0 := mem0api.New(e.svc, mem0api.Options{Principal: PrincipalFrom, WriteError: e.api.WriteError})
	e.api.Mount(mem0api.Prefix+"/", http.StripPrefix(mem0api.Prefix, m0.Handler()))
	e.api.Mount("/mcp", mcpserver.New(e.svc, mcpserver.Options{Principal: PrincipalFrom, Logger: slog.New(slog.DiscardHandler)}).HTTPHandler())
	alice := e.principal("acme", "alice", []string{"user"})
	text := strings.Repeat("tea at five ", 700) // 8 KiB, more than the budget has left
	type request struct {
		name, path string
		header     http.Header
		body       string
		ok         int
	}
	requests := []request{
		{"POST /v1/memories", "/v1/memories", nil, fmt.Sprintf(`{"namespace":"n","class":"fact","channel":"user","body":%q}`, text), 201},
		{"a Mem0 add", "/mem0/v3/memories/add/", nil, fmt.Sprintf(`{"messages":[{"role":"user","content":%q}],"user_id":"alice"}`, text), 200},
		{"an MCP initialize", "/mcp", http.Header{"Accept": {"application/json, text/event-stream"}},
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + strings.Repeat(" ", len(text)), 200},
	}
	send := func(rq request) resp {
		req, err := http.NewRequestWithContext(e.ctx, "POST", e.srv.URL+rq.path, strings.NewReader(rq.body))
		if err != nil {
			t.Fatal(err)
		}
		maps.Copy(req.Header, rq.header)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+alice)
		res, err := e.srv.Client().Do(req)
		if err != nil {
			t.Fatalf("%s: %v", rq.name, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return resp{status: res.StatusCode, header: res.Header, body: b}
	}

	prefix := batchPrefix(25, 10<<10)
	if len(prefix) > 256<<10 || 256<<10-len(prefix) > len(text) {
		t.Fatalf("the batch is %d bytes: it must leave less than %d of the budget", len(prefix), len(text))
	}
	pw, answer := e.stream(t, alice)
	go pw.Write(prefix)
	for e.api.budget.Held() != int64(len(prefix)) {
		time.Sleep(5 * time.Millisecond) // until the server has read the whole prefix
	}
	n := e.count("acme")
	for _, rq := range requests {
		r := send(rq)
		if r.status != http.StatusServiceUnavailable || r.errCode() != "server_busy" || r.header.Get("Retry-After") == "" {
			t.Errorf("%s with the budget held: %d %s (Retry-After %q); want 503 server_busy with Retry-After", rq.name, r.status, r.body, r.header.Get("Retry-After"))
		}
	}
	if got := e.count("acme"); got != n {
		t.Errorf("requests refused for the budget wrote %d records", got-n)
	}
	io.WriteString(pw, batchEnd)
	pw.Close()
	want(t, <-answer, 200, "")
	for _, rq := range requests {
		if r := send(rq); r.status != rq.ok {
			t.Errorf("%s once the batch ended: %d %s, want %d", rq.name, r.status, r.body, rq.ok)
		}
	}
}
