package sqlite

import (
	"context"

	custody "github.com/custody-mem/custody"
)

// ChecksPrincipals says that Update checks, in the writer's transaction,
// the principals version a write's context expects
// (custody.PrincipalsChecker): an HTTP write of a token the server has
// authenticated before reads nothing before it reaches the writer. The
// writer's transaction begins after the request did, so a change to the
// principals committed before the request began (by this process, another
// server on the file or the offline CLI) is seen all the same.
func (s *Store) ChecksPrincipals() bool { return true }

// checkPrincipals reads the principals version, in the writer's
// transaction, when a write of the batch expects one
// (custody.ExpectedPrincipals), and answers each write whose expectation
// fails with custody.ErrPrincipalsChanged in errs: the writer does not run
// it. The read is one of the writer's cached statements, of a page its cache holds.
func (t *txn) checkPrincipals(ctx context.Context, batch []*write, errs []error) error {
	ctxs := make([]context.Context, len(batch))
	for i, w := range batch {
		ctxs[i] = w.ctx
	}
	refused, err := custody.PrincipalsRefused(ctxs, func() (n int64, err error) {
		err = t.QueryRowContext(ctx, `SELECT n FROM principals_version WHERE id = 0`).Scan(&n)
		return n, err
	})
	for i, r := range refused {
		if r {
			errs[i] = custody.ErrPrincipalsChanged
		}
	}
	return err
}
