package httpapi

import (
	"context"
	"fmt"

	"github.com/custody-mem/custody"
	"github.com/custody-mem/custody/tiles"
	"github.com/custody-mem/custody/witness"
)

// Which checkpoint is a log's current one.
//
// Without a witness policy (Options.WitnessPolicy nil or quorum none), the
// current checkpoint of a log is its newest, with whatever cosignatures
// the witnesses gave it so far. With a policy, it is the newest whose
// cosignatures met the policy (witness.Published, kept by the pusher of
// serve): a write is in the log, and in the newest checkpoint, at once,
// but is covered by the current one only once the witnesses cosigned a
// checkpoint that holds it. The newest is still served, as such:
// /log/<ID>/latest-checkpoint and GET /v1/log/checkpoint?latest=true.

// errUnwitnessed is the answer for a log none of whose checkpoints met the
// witness policy yet.
var errUnwitnessed = fmt.Errorf("%w: no checkpoint of this log has met the witness policy yet (the newest, not yet witnessed, is at latest-checkpoint, or GET /v1/log/checkpoint?latest=true)", custody.ErrNotFound)

// tileLog is the tiles.Log of the service: its logs (custody.TreeLogs),
// whose Checkpoint is the current one.
func (s *Server) tileLog() tiles.Log { return currentLogs{s.svc.TreeLogs(), s} }

type currentLogs struct {
	tiles.Log
	s *Server
}

func (l currentLogs) Checkpoint(ctx context.Context, tenant string) ([]byte, error) {
	return l.s.currentCheckpoint(ctx, tenant)
}

// gated reports whether the server publishes only checkpoints that met a
// witness policy.
func (s *Server) gated() bool { return !s.opts.WitnessPolicy.None() }

// currentCheckpoint is tenant's current checkpoint: the newest that met
// the witness policy, or without one, the newest with its cosignatures.
func (s *Server) currentCheckpoint(ctx context.Context, tenant string) ([]byte, error) {
	if !s.gated() {
		return s.latestCheckpoint(ctx, tenant)
	}
	pub, ok := s.svc.Store().(witness.Published)
	if !ok {
		return nil, fmt.Errorf("this store keeps no published checkpoints, which a witness policy needs")
	}
	note, err := pub.PublishedCheckpoint(ctx, s.svc.LogOrigin(tenant))
	if err != nil {
		return nil, err
	}
	if note == nil {
		return nil, errUnwitnessed
	}
	return note, nil
}

// latestCheckpoint is tenant's newest stored checkpoint with the
// cosignatures the witnesses gave it so far.
func (s *Server) latestCheckpoint(ctx context.Context, tenant string) ([]byte, error) {
	note, err := s.svc.TreeLogs().Checkpoint(ctx, tenant)
	if err != nil {
		return nil, err
	}
	return s.withCosignatures(ctx, note)
}

// withCosignatures appends to note, a signed checkpoint, the witnesses'
// stored cosignatures of it (none when the store keeps none).
func (s *Server) withCosignatures(ctx context.Context, note []byte) ([]byte, error) {
	ws, ok := s.svc.Store().(witness.Store)
	if !ok {
		return note, nil
	}
	origin, _, err := witness.Header(note)
	if err != nil {
		return nil, err
	}
	states, err := ws.WitnessStates(ctx, origin)
	if err != nil {
		return nil, err
	}
	return witness.AppendCosignatures(note, states), nil
}
