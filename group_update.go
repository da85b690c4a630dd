package custody

import "context"

// GroupUpdater is implemented by a store that commits concurrent writes
// together (both backends do: group commit). UpdateEach runs each of fns
// as Update would, in the order given and in one transaction, each in a
// savepoint of its own: fns[i] sees the writes of the fns before it, and
// its error (returned at i) rolls back its own changes only. A failure of
// the transaction itself (the commit) fails every write. The service does
// not need it; it lets a test, or a bulk loader, form a batch on purpose
// instead of waiting for concurrent writes to meet.
type GroupUpdater interface {
	UpdateEach(ctx context.Context, fns ...func(Tx) error) []error
}
