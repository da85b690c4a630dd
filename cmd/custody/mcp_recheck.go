package main

import (
	"context"
	"errors"
	"fmt"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/mcpserver"
	"github.com/custody-mem/custody/memgraph"
)

// recheckedBackend is the stdio server's backend on a store: it
// authenticates its token and resolves its subject again before every
// tool call, so that a principal revoked, rotated or changed meanwhile (by
// a server or custody principal on the same store) is refused, or acts
// with its new rights, from its next message on.
type recheckedBackend struct {
	svc            *custody.Service
	token, subject string
	principal      *custody.Principal // as authenticated at start
}

var _ mcpserver.Boundary = recheckedBackend{}

// caller authenticates the token and resolves the subject as they stand now.
func (b recheckedBackend) caller(ctx context.Context) (*custody.Caller, error) {
	p, err := b.svc.Authenticate(ctx, b.token)
	if errors.Is(err, custody.ErrUnauthenticated) {
		return nil, b.tokenGone(ctx)
	}
	if err != nil {
		return nil, err
	}
	return b.svc.Act(ctx, p, b.subject)
}

// tokenGone is the error of a token that authenticated this session at
// start and no longer does: the principal was revoked, or its token
// rotated, meanwhile. The principal's row says which.
func (b recheckedBackend) tokenGone(ctx context.Context) error {
	id := b.principal.ID()
	info, err := b.svc.ShowPrincipal(ctx, custody.PrincipalAdmin{Tenant: b.principal.Tenant, By: cliOperator}, b.principal.Name)
	msg := fmt.Sprintf("the token of %s no longer authenticates (the principal was revoked or its token rotated since this MCP session started); nothing was done. Restart custody mcp with a current token", id)
	switch {
	case err == nil && info.Status == custody.PrincipalRevoked:
		msg = fmt.Sprintf("the token of %s was revoked since this MCP session started; nothing was done, and this session can do nothing more. Ask an admin of %s for a new principal and restart custody mcp with its token", id, b.principal.Tenant)
	case err == nil && info.Status == custody.PrincipalActive:
		msg = fmt.Sprintf("the token of %s was rotated since this MCP session started; nothing was done. Restart custody mcp with the new token", id)
	}
	return &custody.Error{Kind: custody.ErrUnauthenticated, Msg: msg}
}

func (b recheckedBackend) local(ctx context.Context) (mcpserver.Backend, error) {
	c, err := b.caller(ctx)
	if err != nil {
		return nil, err
	}
	return mcpserver.Local(b.svc, c), nil
}

// recheckedGraph is the memory graph's backend on a store, checked the
// same way before every call: writes through recheckedBackend's Remember,
// reads through List.
type recheckedGraph struct{ recheckedBackend }

var _ memgraph.Backend = recheckedGraph{}

func (g recheckedGraph) List(ctx context.Context, in custody.ListInput) (*custody.Page, error) {
	c, err := g.caller(ctx)
	if err != nil {
		return nil, err
	}
	return g.svc.List(ctx, c, in)
}

// boundary is local's side of the gateway (observations, confirmations).
func (b recheckedBackend) boundary(ctx context.Context) (mcpserver.Boundary, error) {
	l, err := b.local(ctx)
	if err != nil {
		return nil, err
	}
	return l.(mcpserver.Boundary), nil
}

func (b recheckedBackend) Observe(ctx context.Context, session string, in custody.ObservationInput) error {
	l, err := b.boundary(ctx)
	if err != nil {
		return err
	}
	return l.Observe(ctx, session, in)
}

func (b recheckedBackend) ConfirmAction(ctx context.Context, action string, args map[string]any) error {
	l, err := b.boundary(ctx)
	if err != nil {
		return err
	}
	return l.ConfirmAction(ctx, action, args)
}

func (b recheckedBackend) Endorse(ctx context.Context, session string, in custody.EndorseInput) error {
	l, err := b.boundary(ctx)
	if err != nil {
		return err
	}
	return l.Endorse(ctx, session, in)
}

// Principal is the credential as it was at start: the gateway checks its
// channels then; every call authenticates again.
func (b recheckedBackend) Principal() *custody.Principal { return b.principal }

func (b recheckedBackend) OpenSession(ctx context.Context) (*custody.Session, error) {
	l, err := b.local(ctx)
	if err != nil {
		return nil, err
	}
	return l.OpenSession(ctx)
}

func (b recheckedBackend) Search(ctx context.Context, in custody.SearchInput) (*custody.SearchResult, error) {
	l, err := b.local(ctx)
	if err != nil {
		return nil, err
	}
	return l.Search(ctx, in)
}

func (b recheckedBackend) Get(ctx context.Context, id string) (*custody.Record, error) {
	l, err := b.local(ctx)
	if err != nil {
		return nil, err
	}
	return l.Get(ctx, id)
}

func (b recheckedBackend) History(ctx context.Context, id string) ([]*custody.Record, error) {
	l, err := b.local(ctx)
	if err != nil {
		return nil, err
	}
	return l.History(ctx, id)
}

func (b recheckedBackend) Remember(ctx context.Context, in custody.Candidate) (*custody.Decision, error) {
	l, err := b.local(ctx)
	if err != nil {
		return nil, err
	}
	return l.Remember(ctx, in)
}

func (b recheckedBackend) Gate(ctx context.Context, in custody.GateInput) (*custody.GateDecision, error) {
	l, err := b.local(ctx)
	if err != nil {
		return nil, err
	}
	return l.Gate(ctx, in)
}

func (b recheckedBackend) Observations(ctx context.Context, session string) ([]*custody.Observation, error) {
	l, err := b.local(ctx)
	if err != nil {
		return nil, err
	}
	return l.Observations(ctx, session)
}

// Confirm is the owner's confirmation of a graph write that waits for her
// (memgraph.Confirmer), as the principal stands now.
func (g recheckedGraph) Confirm(ctx context.Context, id string) (*custody.Record, error) {
	c, err := g.caller(ctx)
	if err != nil {
		return nil, err
	}
	return g.svc.Confirm(ctx, c, id)
}
