package custody

import (
	"context"
	"errors"
	"fmt"
)

// MaxBatch is the most candidates RememberBatch takes at once.
const MaxBatch = 1000

// RememberBatch submits candidates of one caller together. Each is decided
// as Remember decides it (its own state, receipt and log entry); all of
// them commit in one transaction, and the decisions come back in the order
// of the candidates. A candidate that is invalid, names a channel the
// principal may not assert, or a parent or session that cannot be found
// refuses the whole batch: nothing is written, and the error names the
// candidate by its index, as items[i] (an invalid namespace of the fourth
// is "items[3].namespace: ...").
func (s *Service) RememberBatch(ctx context.Context, c *Caller, in []Candidate) ([]*Decision, error) {
	switch {
	case len(in) == 0:
		return nil, invalid("items", "items is empty; a batch holds 1 to %d candidates", MaxBatch)
	case len(in) > MaxBatch:
		return nil, invalid("items", "a batch holds at most %d candidates and this one has %d; send it in parts of %d", MaxBatch, len(in), MaxBatch)
	}
	recs := make([]*Record, len(in))
	for i := range in {
		if err := s.validate(c, &in[i]); err != nil {
			return nil, ItemError(i, err)
		}
		recs[i] = s.newRecord(c, &in[i])
	}
	// Each is decided ahead (batch_ahead.go), against the state the
	// writer saw last; the writer decides again any whose state changed
	// meanwhile, an earlier one of the batch included (a second version
	// of a key, say).
	ahead := s.prepareAhead(ctx, c, recs)
	err := s.update(ctx, func(tx Tx) error {
		tx, err := readKeysAhead(ctx, tx, c.Tenant(), c.Subject.Name, recs)
		if err != nil {
			return err
		}
		for i, r := range recs {
			if err := s.admitNew(ctx, tx, c, r, ahead.take(i)); err != nil {
				return ItemError(i, err)
			}
		}
		return nil
	})
	ahead.end()
	if err != nil {
		return nil, err
	}
	out := make([]*Decision, len(recs))
	for i, r := range recs {
		out[i] = decisionOf(r)
	}
	return out, nil
}

// ItemError names item i of a batch in err, when err is the domain's
// *Error about the item: it becomes one for the field items[i].field, its
// message prefixed with that. Not-found errors are left as they are (their
// one message must not tell what was found), and so are errors that are
// not about an item (the store, the context).
func ItemError(i int, err error) error {
	var e *Error
	if !errors.As(err, &e) || e.Kind == ErrNotFound {
		return err
	}
	field := fmt.Sprintf("items[%d]", i)
	if e.Field != "" {
		field += "." + e.Field
	}
	return &Error{Kind: e.Kind, Field: field, Msg: field + ": " + e.Msg}
}
