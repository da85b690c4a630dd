package custody

import (
	"context"
	"errors"
	"fmt"
)

// ErrRecordsDiffer is returned by Reindex when the records themselves
// disagree with the log: rebuilding from them would only make the damage
// consistent, so the store is left alone.
var ErrRecordsDiffer = errors.New("the records disagree with the log")

// ReindexOptions configure Reindex.
type ReindexOptions struct {
	// Checkpoints are checked by the verify runs before and after, as in
	// VerifyOptions.
	Checkpoints [][]byte
	// Progress, if set, is told each step's progress: "verifying" (log
	// entries), "rebuilding" (records), "verifying again" (log entries).
	Progress func(step string, done, total uint64)
}

// Reindex rebuilds the structures the store derives from the records for
// speed (head flags, lineage edges, search and trigram indexes) from the
// records, once Verify has found the records themselves to match the log;
// then it verifies the whole store again. It is the remedy for a
// difference Verify reports as Derived, and it also mends damage Verify
// cannot see (SQLite's contentless indexes keep no text to compare).
func (s *Service) Reindex(ctx context.Context, opts ReindexOptions) (*VerifyReport, error) {
	ri, ok := s.store.(Reindexer)
	if !ok {
		return nil, fmt.Errorf("this store keeps no structures to rebuild")
	}
	step := func(name string) func(done, total uint64) {
		if opts.Progress == nil {
			return nil
		}
		return func(done, total uint64) { opts.Progress(name, done, total) }
	}
	_, err := s.Verify(ctx, VerifyOptions{Checkpoints: opts.Checkpoints, Progress: step("verifying"), RecordsOnly: true})
	var d *Difference
	if errors.As(err, &d) {
		return nil, fmt.Errorf("%w: %s", ErrRecordsDiffer, d.What)
	}
	if err != nil {
		return nil, err
	}
	if err := ri.Reindex(ctx, step("rebuilding")); err != nil {
		return nil, fmt.Errorf("rebuilding: %w", err)
	}
	return s.Verify(ctx, VerifyOptions{Checkpoints: opts.Checkpoints, Progress: step("verifying again")})
}
