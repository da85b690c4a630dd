package postgres

import "context"

// CountRecords counts the tenant's records in any state
// (custody.RecordCounter).
func (t *txn) CountRecords(ctx context.Context, tenant string) (uint64, error) {
	var n int64
	err := t.tx.QueryRow(ctx, `SELECT COUNT(*) FROM records WHERE tenant = $1`, tenant).Scan(&n)
	return uint64(n), classify(err)
}
