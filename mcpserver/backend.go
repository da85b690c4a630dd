package mcpserver

import (
	"context"

	custody "github.com/custody-mem/custody"
)

// Backend is what the tools need of custody, for one caller: the service in
// process (Local) or, for a stdio server that reaches a running custody over
// HTTP, a client of its API. Errors should wrap the domain's sentinels
// (custody.ErrNotFound, ErrInvalid, ...), ideally as *custody.Error, so
// they become the right tool errors.
type Backend interface {
	// OpenSession opens the custody session of one MCP session.
	OpenSession(ctx context.Context) (*custody.Session, error)
	// Search ranks in.Mode's way; the result says which mode ranked.
	Search(ctx context.Context, in custody.SearchInput) (*custody.SearchResult, error)
	// Get returns a record only if retrieval may return it to the subject.
	Get(ctx context.Context, id string) (*custody.Record, error)
	History(ctx context.Context, id string) ([]*custody.Record, error)
	Remember(ctx context.Context, in custody.Candidate) (*custody.Decision, error)
	Gate(ctx context.Context, in custody.GateInput) (*custody.GateDecision, error)
	// Observations lists what was recorded as observed in a session of the
	// subject. A backend that cannot tell returns nil and no error.
	Observations(ctx context.Context, session string) ([]*custody.Observation, error)
}

// Local is the Backend of caller c on the service in this process.
func Local(svc *custody.Service, c *custody.Caller) Backend { return local{svc, c} }

type local struct {
	svc *custody.Service
	c   *custody.Caller
}

func (l local) OpenSession(ctx context.Context) (*custody.Session, error) {
	return l.svc.OpenSession(ctx, l.c)
}

func (l local) Search(ctx context.Context, in custody.SearchInput) (*custody.SearchResult, error) {
	return l.svc.SearchRanked(ctx, l.c, in)
}

func (l local) Get(ctx context.Context, id string) (*custody.Record, error) {
	return l.svc.Get(ctx, l.c, id)
}

func (l local) History(ctx context.Context, id string) ([]*custody.Record, error) {
	return l.svc.History(ctx, l.c, id)
}

func (l local) Remember(ctx context.Context, in custody.Candidate) (*custody.Decision, error) {
	return l.svc.Remember(ctx, l.c, in)
}

func (l local) Gate(ctx context.Context, in custody.GateInput) (*custody.GateDecision, error) {
	return l.svc.Gate(ctx, l.c, in)
}

// Observations reads the session's observations from the store: the
// service has no method for it.
func (l local) Observations(ctx context.Context, id string) ([]*custody.Observation, error) {
	var obs []*custody.Observation
	err := l.svc.Store().View(ctx, func(tx custody.Tx) error {
		sess, err := tx.Session(ctx, l.c.Tenant(), id)
		if err != nil || sess.Subject != l.c.Subject.Name {
			return err
		}
		obs, err = tx.Observations(ctx, l.c.Tenant(), id)
		return err
	})
	return obs, err
}
