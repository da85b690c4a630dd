package main

import (
	"context"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/mcpserver"
)

// recheckedBackend is the stdio server's backend on a store: it
// authenticates its token and resolves its subject again before every
// tool call, so that a principal revoked, rotated or changed meanwhile (by
// a server or custody principal on the same store) is refused, or acts
// with its new rights, from its next message on.
type recheckedBackend struct {
	svc            *custody.Service
	token, subject string
}

func (b recheckedBackend) local(ctx context.Context) (mcpserver.Backend, error) {
	p, err := b.svc.Authenticate(ctx, b.token)
	if err != nil {
		return nil, err
	}
	c, err := b.svc.Act(ctx, p, b.subject)
	if err != nil {
		return nil, err
	}
	return mcpserver.Local(b.svc, c), nil
}

func (b recheckedBackend) OpenSession(ctx context.Context) (*custody.Session, error) {
	l, err := b.local(ctx)
	if err != nil {
		return nil, err
	}
	return l.OpenSession(ctx)
}

func (b recheckedBackend) Search(ctx context.Context, in custody.SearchInput) ([]custody.Scored, error) {
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
