package httpapi

import (
	"context"

	"github.com/custody-mem/custody/tiles"
	"github.com/custody-mem/custody/witness"
)

// tileLog is the tiles.Log of the service: its logs (custody.TreeLogs),
// with each checkpoint's stored witness cosignatures appended.
func (s *Server) tileLog() tiles.Log { return cosignedLogs{s.svc.TreeLogs(), s} }

type cosignedLogs struct {
	tiles.Log
	s *Server
}

func (l cosignedLogs) Checkpoint(ctx context.Context, tenant string) ([]byte, error) {
	note, err := l.Log.Checkpoint(ctx, tenant)
	if err != nil {
		return nil, err
	}
	return l.s.withCosignatures(ctx, note)
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
