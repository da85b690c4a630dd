package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/client"
	"github.com/custody-mem/custody/httpapi"
	"github.com/custody-mem/custody/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func runMCP(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return serveMCP(ctx, args, stdin, stdout, stderr)
}

// serveMCP is runMCP reading the MCP client's messages from in.
func serveMCP(ctx context.Context, args []string, in io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sf storeFlags
	sf.register(fs)
	sf.registerPolicy(fs)
	token := fs.String("token", "", "bearer `token` of the principal the model acts through (default $CUSTODY_TOKEN, which keeps it out of process listings)")
	subject := fs.String("subject", "", "`user` to act for; required when the token is an agent's")
	channel := fs.String("channel", mcpserver.DefaultChannel, "`channel` of every memory_remember write; the token must be registered with it")
	gw := fs.String("gateway", "", gatewayUsage)
	url := fs.String("url", "", "serve on a running custody server at `URL` (such as "+DefaultURL+") instead of opening --db")
	memoryGraph := fs.Bool("memory-graph", false, "serve the tools of the reference MCP memory server (create_entities, read_graph, ...) instead, on custody memories; see docs/mcp.md")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: custody mcp [--db FILE] [--token TOKEN] [--subject USER] [--channel C] [--gateway FILE]\n"+
			"       custody mcp --url URL [--token TOKEN] [--subject USER] [--channel C]\n\n"+
			"Serves the MCP tools memory_search, memory_get, memory_remember, memory_gate and memory_history\n"+
			"over stdio (newline-delimited JSON-RPC on stdin and stdout) for one principal, on the store\n"+
			"directly or on a running server. The MCP session is one custody session; its id is in the server's\n"+
			"instructions, for a harness to record observations. With --gateway, it also fronts the MCP servers\n"+
			"the file lists, with the gate in front of each call and each result observed. Logs go to stderr.\n"+
			"See docs/mcp.md.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	if *token == "" {
		*token = strings.TrimSpace(os.Getenv("CUSTODY_TOKEN"))
	}
	if *token == "" {
		return usageError{"give the principal's token with --token or $CUSTODY_TOKEN (custody principal add prints one)"}
	}
	if err := custody.ValidChannel(*channel); err != nil {
		return usageError{err.Error()}
	}
	if *url != "" {
		var storeSet []string
		fs.Visit(func(f *flag.Flag) {
			switch f.Name {
			case "db", "key", "origin", "policy", "sensitive":
				storeSet = append(storeSet, "--"+f.Name)
			}
		})
		if len(storeSet) > 0 {
			return usageError{fmt.Sprintf("--url serves on a running server; %s belong to the server, not to custody mcp", strings.Join(storeSet, ", "))}
		}
	}

	logger := slog.New(slog.NewTextHandler(stderr, nil))
	opts := mcpserver.Options{Channel: *channel, Logger: logger}
	if *url != "" && *gw != "" {
		return usageError{"--gateway records upstream results in the store: serve on the store with --db, or give the server --gateway (custody serve --gateway)"}
	}
	g, err := startGateway(ctx, *gw, logger, stderr)
	if err != nil {
		return err
	}
	if g != nil {
		defer g.Close()
		opts.Gateway = g
	}
	transport := &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{stdout}}
	var (
		srv *mcpserver.Server
		b   mcpserver.Backend
	)
	if *url != "" {
		c := client.New(*url, *token)
		if err := c.Health(ctx); err != nil {
			return fmt.Errorf("no custody server at %s: %w", *url, err)
		}
		if *memoryGraph {
			return serveMemoryGraphRemote(ctx, c, *subject, *channel, transport)
		}
		srv, b = mcpserver.New(nil, opts), remote{c: c, subject: *subject}
	} else {
		if _, err := os.Stat(sf.db); err != nil && sf.postgres == "" {
			return fmt.Errorf("no store at %s: create it and a principal with custody principal add --db %s (%w)", sf.db, sf.db, err)
		}
		svc, st, err := sf.open(ctx, stderr)
		if err != nil {
			return err
		}
		defer st.Close()
		prepareSearch(st)
		p, err := svc.Authenticate(ctx, *token)
		if errors.Is(err, custody.ErrUnauthenticated) {
			return fmt.Errorf("the token is not one of the store %s: create a principal with custody principal add --db %s", sf.db, sf.db)
		}
		if err != nil {
			return err
		}
		caller, err := svc.Act(ctx, p, *subject)
		if err != nil {
			return fmt.Errorf("acting for %q: %w", *subject, err)
		}
		if !p.MayAssert(*channel) {
			logger.Warn(fmt.Sprintf("principal %s is not registered for channel %s, so memory_remember will be refused; "+
				"create it with --channel %s too, or run custody mcp --channel with one of %v", p.ID(), *channel, *channel, p.Channels))
		}
		// checked here for a clear message at start; every tool call checks again
		rb := recheckedBackend{svc: svc, token: *token, subject: *subject, principal: p}
		if *memoryGraph {
			return serveMemoryGraph(ctx, svc, caller, rb, *channel, transport)
		}
		srv, b = mcpserver.New(svc, opts), rb
	}
	err = srv.Run(ctx, b, transport)
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) || errors.Is(err, mcp.ErrConnectionClosed) {
		return nil
	}
	return err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// remote is the tools' backend on a running server, through its HTTP API.
type remote struct {
	c       *client.Client
	subject string
}

func (r remote) OpenSession(ctx context.Context) (*custody.Session, error) {
	s, err := r.c.OpenSession(ctx, r.subject)
	return s, remoteErr(err)
}

func (r remote) Search(ctx context.Context, in custody.SearchInput) (*custody.SearchResult, error) {
	res, err := r.c.Search(ctx, r.searchRequest(in, ""))
	if err != nil {
		return nil, remoteErr(err)
	}
	return &custody.SearchResult{Items: res.Items, Mode: custody.SearchMode(res.Mode), Fallback: res.Fallback}, nil
}

// searchRequest is in as the server's search takes it, in session.
func (r remote) searchRequest(in custody.SearchInput, session string) httpapi.SearchRequest {
	return httpapi.SearchRequest{Query: in.Query, Subject: r.subject, Session: session, Namespace: in.Namespace, NamespacePrefix: in.NamespacePrefix,
		Class: string(in.Class), KeyPrefix: in.KeyPrefix, CreatedAfter: rfc3339(in.CreatedAfter), CreatedBefore: rfc3339(in.CreatedBefore),
		Metadata: in.Metadata, Limit: in.Limit, Mode: string(in.Mode)}
}

func (r remote) Get(ctx context.Context, id string) (*custody.Record, error) {
	rec, err := r.c.Get(ctx, id, r.subject)
	return rec, remoteErr(err)
}

func (r remote) History(ctx context.Context, id string) ([]*custody.Record, error) {
	recs, err := r.c.History(ctx, id, r.subject)
	return recs, remoteErr(err)
}

func (r remote) Remember(ctx context.Context, in custody.Candidate) (*custody.Decision, error) {
	req := httpapi.MemoryRequest{Namespace: in.Namespace, Key: in.Key, Class: string(in.Class), Body: in.Body, Channel: in.Channel,
		Subject: r.subject, Session: in.Session, SourceRef: in.SourceRef, Metadata: in.Metadata}
	if in.ExpiresAt != nil {
		req.ExpiresAt = in.ExpiresAt.UTC().Format(time.RFC3339Nano)
	}
	d, err := r.c.Remember(ctx, req)
	return d, remoteErr(err)
}

func (r remote) Gate(ctx context.Context, in custody.GateInput) (*custody.GateDecision, error) {
	d, err := r.c.Gate(ctx, httpapi.GateRequest{Action: in.Action, Args: in.Args, Justification: in.Justification, Session: in.Session, Subject: r.subject})
	return d, remoteErr(err)
}

// Observations: the HTTP API has no route that reads a session back.
func (r remote) Observations(context.Context, string) ([]*custody.Observation, error) {
	return nil, nil
}

// remoteErr turns the server's error answer back into the domain's typed
// error, so the tools report it as they do in process.
func remoteErr(err error) error {
	var e *client.Error
	if !errors.As(err, &e) {
		return err
	}
	if errors.Is(e, custody.ErrUnauthenticated) {
		return &custody.Error{Kind: custody.ErrUnauthenticated, Msg: "the server does not accept this MCP session's token (it was revoked or rotated, or was never issued); nothing was done. Restart custody mcp with a current token"}
	}
	for _, kind := range []error{custody.ErrNotFound, custody.ErrInvalid, custody.ErrForbidden,
		custody.ErrSubjectNotAllowed, custody.ErrConflict, custody.ErrUndecidable, custody.ErrUnavailable} {
		if errors.Is(e, kind) {
			return &custody.Error{Kind: kind, Field: e.Field, Msg: e.Message}
		}
	}
	return err
}
