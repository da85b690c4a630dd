package postgres

import (
	"context"

	custody "github.com/custody-mem/custody"
)

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

// ChecksPrincipals says that Update checks the principals version a
// write's context expects (custody.PrincipalsChecker): in the round trip
// of a batch run ahead (ahead.go), or read once before a batch that reads
// (checkPrincipals).
func (s *Store) ChecksPrincipals() bool { return true }

// expectPrincipalsSQL fails a batch run ahead whose writes expect another
// principals version.
const expectPrincipalsSQL = `SELECT custody_expect((SELECT n FROM principals_version WHERE id = 0) = $1::bigint, 'the principals')`

// checkPrincipals reads the principals version for the writes of a batch
// that expect one (custody.ExpectedPrincipals), and answers those whose
// expectation fails with custody.ErrPrincipalsChanged: they are not run.
// False when the batch is lost.
func (b *batchRun) checkPrincipals() bool {
	ctxs := make([]context.Context, len(b.batch))
	for i, w := range b.batch {
		ctxs[i] = w.ctx
	}
	refused, err := custody.PrincipalsRefused(ctxs, func() (n int64, err error) {
		err = b.tx.c.QueryRow(b.ctx, `SELECT n FROM principals_version WHERE id = 0`).Scan(&n)
		return n, err
	})
	if err != nil {
		b.s.fail(b.errs, err)
		return false
	}
	if refused == nil {
		return true
	}
	keep := b.batch[:0]
	for i, w := range b.batch {
		if refused[i] {
			w.done <- custody.ErrPrincipalsChanged
			continue
		}
		keep = append(keep, w)
	}
	b.batch, b.errs, b.busy = keep, b.errs[:len(keep)], b.busy[:len(keep)]
	b.alone = len(keep) == 1
	return true
}
