package postgres

import "context"

// PrincipalsVersion reads the principals version (migration 010): one
// row, outside any transaction, so that it sees the latest commit of
// every server and of the offline CLI.
func (s *Store) PrincipalsVersion(ctx context.Context) (int64, error) {
	var n int64
	if err := s.pool.QueryRow(ctx, `SELECT n FROM principals_version WHERE id = 0`).Scan(&n); err != nil {
		return 0, classify(err)
	}
	return n, nil
}
