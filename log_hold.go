package custody

import "context"

// LogHolder is implemented by a store's write transaction that can hold
// back the rows of a write's log appends and insert them together at its
// end, which for a write of many records (a batch) saves a statement or
// two a record. The service holds them around every write it runs
// (update): HoldLog before, FlushLog after it succeeded, DropLog after it
// failed. A transaction that holds rows still reads them (its LogSize,
// Leaves and Nodes see every append made), and what it holds commits or
// rolls back with the write.
type LogHolder interface {
	HoldLog()
	FlushLog(ctx context.Context) error
	DropLog()
}

// holdingLog runs fn with tx's log appends held, if tx can hold them.
func holdingLog(ctx context.Context, tx Tx, fn func() error) error {
	h, ok := tx.(LogHolder)
	if !ok {
		return fn()
	}
	h.HoldLog()
	if err := fn(); err != nil {
		h.DropLog()
		return err
	}
	return h.FlushLog(ctx)
}
