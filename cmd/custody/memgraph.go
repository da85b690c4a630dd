package main

import (
	"context"
	"errors"
	"io"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/client"
	"github.com/custody-mem/custody/memgraph"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveMemoryGraph is custody mcp --memory-graph: the reference MCP memory
// server's tools on the store, for caller, in a custody session of its own.
// b authenticates again before every call, so a principal revoked or
// changed meanwhile is refused, or acts with its new rights.
func serveMemoryGraph(ctx context.Context, svc *custody.Service, caller *custody.Caller, b recheckedBackend, channel string, t mcp.Transport) error {
	sess, err := svc.OpenSession(ctx, caller)
	if err != nil {
		return err
	}
	return runMemoryGraph(ctx, recheckedGraph{b}, channel, sess.ID, t)
}

// serveMemoryGraphRemote is custody mcp --memory-graph --url: the same on a
// running server, through its HTTP API.
func serveMemoryGraphRemote(ctx context.Context, c *client.Client, subject, channel string, t mcp.Transport) error {
	sess, err := c.OpenSession(ctx, subject)
	if err != nil {
		return remoteErr(err)
	}
	return runMemoryGraph(ctx, remoteGraph{remote{c: c, subject: subject}}, channel, sess.ID, t)
}

func runMemoryGraph(ctx context.Context, b memgraph.Backend, channel, session string, t mcp.Transport) error {
	g, err := memgraph.New(b, memgraph.DefaultNamespace, channel, session)
	if err != nil {
		return err
	}
	err = memgraph.NewServer(g, binaryVersion()).Run(ctx, t)
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) || errors.Is(err, mcp.ErrConnectionClosed) {
		return nil
	}
	return err
}

// remoteGraph is the graph's backend on a running server: the MCP tools'
// remote backend (mcp.go), which already writes, plus listing.
type remoteGraph struct{ remote }

func (r remoteGraph) List(ctx context.Context, in custody.ListInput) (*custody.Page, error) {
	p, err := r.c.List(ctx, client.ListOptions{Namespace: in.Namespace, NamespacePrefix: in.NamespacePrefix, Key: in.Key, Class: string(in.Class), Limit: in.Limit, Cursor: in.Cursor, Subject: r.subject})
	if err != nil {
		return nil, remoteErr(err)
	}
	return &custody.Page{Items: p.Items, NextCursor: p.NextCursor}, nil
}

// Confirm is the owner's confirmation of a graph write that waits for her
// (memgraph.Confirmer), on the running server.
func (r remoteGraph) Confirm(ctx context.Context, id string) (*custody.Record, error) {
	rec, err := r.c.Confirm(ctx, id, r.subject)
	if err != nil {
		return nil, remoteErr(err)
	}
	return rec, nil
}
