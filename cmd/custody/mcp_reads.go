package main

import (
	"context"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/mcpserver"
)

// Both backends of custody mcp record what the tools' reads returned in
// the MCP session's custody session (mcpserver.SessionReader).
var (
	_ mcpserver.SessionReader = recheckedBackend{}
	_ mcpserver.SessionReader = remote{}
)

func (b recheckedBackend) SearchIn(ctx context.Context, session string, in custody.SearchInput) (*custody.SearchResult, error) {
	l, err := b.local(ctx)
	if err != nil {
		return nil, err
	}
	return l.(mcpserver.SessionReader).SearchIn(ctx, session, in)
}

func (b recheckedBackend) GetIn(ctx context.Context, session, id string) (*custody.Record, error) {
	l, err := b.local(ctx)
	if err != nil {
		return nil, err
	}
	return l.(mcpserver.SessionReader).GetIn(ctx, session, id)
}

func (r remote) SearchIn(ctx context.Context, session string, in custody.SearchInput) (*custody.SearchResult, error) {
	res, err := r.c.Search(ctx, r.searchRequest(in, session))
	if err != nil {
		return nil, remoteErr(err)
	}
	return &custody.SearchResult{Items: res.Items, Mode: custody.SearchMode(res.Mode), Fallback: res.Fallback}, nil
}

func (r remote) GetIn(ctx context.Context, session, id string) (*custody.Record, error) {
	rec, err := r.c.GetIn(ctx, id, r.subject, session)
	return rec, remoteErr(err)
}
