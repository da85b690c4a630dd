package sqlite

import "context"

// CountRecords counts the tenant's records in any state
// (custody.RecordCounter).
func (t *txn) CountRecords(ctx context.Context, tenant string) (uint64, error) {
	var n uint64
	err := t.QueryRowContext(ctx, `SELECT COUNT(*) FROM records WHERE tenant = ?`, tenant).Scan(&n)
	return n, err
}
