package main

import (
	"context"
	"errors"
	"io"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/memgraph"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveMemoryGraph is custody mcp --memory-graph: the reference MCP memory
// server's tools on the store, for caller, in a custody session of its own.
func serveMemoryGraph(ctx context.Context, svc *custody.Service, caller *custody.Caller, channel string, t mcp.Transport) error {
	sess, err := svc.OpenSession(ctx, caller)
	if err != nil {
		return err
	}
	g, err := memgraph.New(memgraph.Local(svc, caller), memgraph.DefaultNamespace, channel, sess.ID)
	if err != nil {
		return err
	}
	err = memgraph.NewServer(g, "1").Run(ctx, t)
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) || errors.Is(err, mcp.ErrConnectionClosed) {
		return nil
	}
	return err
}
