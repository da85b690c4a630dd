package postgres

import (
	"context"
	"fmt"
)

// erasedTables are the tables an erasure rewrites a row of: the record
// (its body, search vector, gate text and metadata; TOAST included), the
// observations that copied its body, and its vector (deleted).
var erasedTables = []string{"records", "observations", "vectors"}

// PurgeErased vacuums the tables an erasure rewrote, once it committed
// (custody.ErasurePurger). PostgreSQL keeps a rewritten row's old version
// in the table, body and all, as a dead tuple until a vacuum finds that no
// transaction can see it any more; VACUUM removes those tuples (and the
// index entries that point at them) at once, without taking a lock that
// holds up reads or writes. records is analyzed again, so that the
// planner's statistics do not keep a sample of an erased value. What
// VACUUM cannot reach (docs/operations.md, "Erasure"): a dead tuple that a
// transaction still open may see (a verify, an export) stays until the
// next vacuum; the space freed in a page keeps its bytes until PostgreSQL
// writes there again, and a GIN index keeps a term's key, until VACUUM
// FULL or REINDEX rewrites them; WAL segments, replicas and backups keep
// what they hold.
func (s *Store) PurgeErased(ctx context.Context) error {
	for _, t := range erasedTables {
		q := "VACUUM " + t
		if t == "records" {
			q = "VACUUM (ANALYZE) records"
		}
		if _, err := s.pool.Exec(ctx, q); err != nil {
			return fmt.Errorf("vacuuming %s after an erasure (run VACUUM %s yourself to remove the old versions of its rows): %w", t, t, err)
		}
	}
	return nil
}
