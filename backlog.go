package custody

import (
	"context"
	"time"
)

// backlogPage is the page size of ReviewBacklog's scan.
const backlogPage = 1000

// ReviewBacklog measures the review queue across all tenants: how many
// candidates wait in quarantine and when the oldest of them was written
// (the zero time when none waits). It is for the server's own gauges, so
// it names no tenant and needs no caller.
func (s *Service) ReviewBacklog(ctx context.Context) (depth int, oldest time.Time, err error) {
	err = s.store.View(ctx, func(tx Tx) error {
		after := ""
		for {
			recs, err := tx.InState(ctx, "", []State{StateQuarantined}, after, backlogPage)
			if err != nil {
				return err
			}
			for _, r := range recs {
				depth++
				if oldest.IsZero() || r.CreatedAt.Before(oldest) {
					oldest = r.CreatedAt
				}
			}
			if len(recs) < backlogPage {
				return nil
			}
			after = recs[len(recs)-1].ID
		}
	})
	return depth, oldest, err
}
