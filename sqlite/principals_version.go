package sqlite

import "context"

// PrincipalsVersion reads the principals version (schema.sql): one row,
// on the read pool with a cached statement, outside any transaction, so
// that it sees the latest commit of any connection or process.
func (s *Store) PrincipalsVersion(ctx context.Context) (int64, error) {
	var n int64
	if err := s.reader().QueryRowContext(ctx, `SELECT n FROM principals_version WHERE id = 0`).Scan(&n); err != nil {
		return 0, unavailable(err)
	}
	return n, nil
}
