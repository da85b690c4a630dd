package mcpserver_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Round trips of memory_search and memory_remember through the MCP SDK's
// client, over the stdio framing (newline-delimited JSON on OS pipes, the
// same transport custody mcp runs on, in one process) and over streamable
// HTTP on loopback, next to the same calls made on the service directly.
// The store is SQLite in a temporary directory with 1,000 memories.
//
//	go test ./mcpserver -run '^$' -bench . -benchtime 2000x
func BenchmarkRoundTrip(b *testing.B) {
	f := newFixture(b, mcpserver.Options{})
	p, token := f.principal(b, "acme", "alice", []string{"user"}, []string{"user", "agent"})
	alice := f.act(b, p, "")
	for i := range 1000 {
		_, err := f.svc.Remember(f.ctx, alice, custody.Candidate{Namespace: "notes", Class: "fact", Channel: "user",
			Body: fmt.Sprintf("note %d about topic%d for project%d", i, i%50, i%7)})
		if err != nil {
			b.Fatal(err)
		}
	}
	transports := map[string]func(testing.TB) *mcp.ClientSession{
		"stdio": func(tb testing.TB) *mcp.ClientSession { return pipeSession(tb, f, alice) },
		"http": func(tb testing.TB) *mcp.ClientSession {
			ts := httptest.NewServer(mcpserver.HTTPHandler(f.svc, mcpserver.Options{}))
			tb.Cleanup(ts.Close)
			tr := &mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: &http.Client{Transport: &bearerTransport{token: token}}}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(f.ctx, tr, nil)
			if err != nil {
				tb.Fatal(err)
			}
			tb.Cleanup(func() { cs.Close() })
			return cs
		},
	}
	// The same operations without MCP, for the transport's share.
	b.Run("search/direct", func(b *testing.B) {
		for b.Loop() {
			if _, err := f.svc.Search(f.ctx, alice, custody.SearchInput{Query: "topic7 project3"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("remember/direct", func(b *testing.B) {
		sess, err := f.svc.OpenSession(f.ctx, alice)
		if err != nil {
			b.Fatal(err)
		}
		i := 0
		for b.Loop() {
			i++
			_, err := f.svc.Remember(f.ctx, alice, custody.Candidate{Namespace: "bench", Class: "preference", Channel: "agent",
				Session: sess.ID, Body: fmt.Sprintf("direct preference number %d", i)})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, name := range []string{"stdio", "http"} {
		cs := transports[name](b)
		b.Run("search/"+name, func(b *testing.B) {
			for b.Loop() {
				res, err := cs.CallTool(f.ctx, &mcp.CallToolParams{Name: mcpserver.ToolSearch, Arguments: map[string]any{"query": "topic7 project3"}})
				if err != nil || res.IsError {
					b.Fatalf("search: %v %v", err, res)
				}
			}
		})
		b.Run("remember/"+name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				i++
				res, err := cs.CallTool(f.ctx, &mcp.CallToolParams{Name: mcpserver.ToolRemember, Arguments: map[string]any{
					"namespace": "bench", "class": "preference", "body": fmt.Sprintf("preference number %d", i)}})
				if err != nil || res.IsError {
					b.Fatalf("remember: %v %v", err, res)
				}
			}
		})
	}
}

// pipeSession connects a client to a server over two OS pipes with the
// stdio transport's framing.
func pipeSession(tb testing.TB, f *fixture, c *custody.Caller) *mcp.ClientSession {
	tb.Helper()
	sr, cw, err := os.Pipe()
	if err != nil {
		tb.Fatal(err)
	}
	cr, sw, err := os.Pipe()
	if err != nil {
		tb.Fatal(err)
	}
	srv, _, err := f.srv.Open(f.ctx, mcpserver.Local(f.svc, c))
	if err != nil {
		tb.Fatal(err)
	}
	ss, err := srv.Connect(context.Background(), &mcp.IOTransport{Reader: sr, Writer: sw}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(f.ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cs.Close(); ss.Wait(); sw.Close(); cr.Close() })
	return cs
}
