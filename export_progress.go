package custody

import "context"

// RecordCounter is implemented by a Tx that counts a tenant's records
// cheaply (both backends: one indexed count); an export uses it to tell
// its progress against a total.
type RecordCounter interface {
	CountRecords(ctx context.Context, tenant string) (uint64, error)
}

// exportProgressEvery is how many records an export reads between two
// reports of its progress.
const exportProgressEvery = 1000

// exportProgress returns what an export calls with the number of records
// read so far: progress every exportProgressEvery records and at the end,
// against the tenant's record count when tx can tell it (0 otherwise).
func exportProgress(ctx context.Context, tx Tx, tenant string, progress func(done, total uint64)) (func(done uint64), error) {
	if progress == nil {
		return func(uint64) {}, nil
	}
	var total uint64
	if rc, ok := tx.(RecordCounter); ok {
		var err error
		if total, err = rc.CountRecords(ctx, tenant); err != nil {
			return nil, err
		}
	}
	return func(done uint64) {
		if done%exportProgressEvery == 0 || done == total {
			progress(done, total)
		}
	}, nil
}
