package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/custody-mem/custody/gateway"
	"github.com/custody-mem/custody/mcpserver"
)

// gatewayUsage is the help of the --gateway flag of mcp and serve.
const gatewayUsage = "front the upstream MCP servers listed in the JSON `file` (see docs/mcp.md, the gateway): their tools are listed as <upstream>_<tool>, each call is checked by the gate and each result is recorded as content the session saw"

// startGateway loads the gateway file and starts its upstreams; "" starts
// nothing. The caller closes the gateway.
func startGateway(ctx context.Context, path string, logger *slog.Logger, stderr io.Writer) (*gateway.Gateway, error) {
	if path == "" {
		return nil, nil
	}
	cfg, err := gateway.Load(path)
	if err != nil {
		return nil, usageError{err.Error()}
	}
	g, err := gateway.Start(ctx, cfg, gateway.Options{Logger: logger, Stderr: stderr, Reserved: mcpserver.ToolNames()})
	if err != nil {
		return nil, fmt.Errorf("gateway %s: %w", path, err)
	}
	return g, nil
}
