package mcpserver

import (
	"context"

	custody "github.com/custody-mem/custody"
)

// SessionReader is implemented by a backend that records what the reads
// of a custody session returned, for the impact of a later repair
// (custody.Service.SearchIn and GetIn). The tools read through it when the
// backend has it, with the MCP session's custody session.
type SessionReader interface {
	SearchIn(ctx context.Context, session string, in custody.SearchInput) (*custody.SearchResult, error)
	GetIn(ctx context.Context, session, id string) (*custody.Record, error)
}

func (l local) SearchIn(ctx context.Context, session string, in custody.SearchInput) (*custody.SearchResult, error) {
	return l.svc.SearchIn(ctx, l.c, session, in)
}

func (l local) GetIn(ctx context.Context, session, id string) (*custody.Record, error) {
	return l.svc.GetIn(ctx, l.c, session, id)
}

// readSearch is the search of the tools, recorded in the session.
func (ss *session) readSearch(ctx context.Context, in custody.SearchInput) (*custody.SearchResult, error) {
	if r, ok := ss.b.(SessionReader); ok {
		return r.SearchIn(ctx, ss.id, in)
	}
	return ss.b.Search(ctx, in)
}

// readGet is the get of the tools, recorded in the session.
func (ss *session) readGet(ctx context.Context, id string) (*custody.Record, error) {
	if r, ok := ss.b.(SessionReader); ok {
		return r.GetIn(ctx, ss.id, id)
	}
	return ss.b.Get(ctx, id)
}
