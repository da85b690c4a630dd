// Package bulk sends the batches of a long import a few at a time, in
// order, and stops at the first one refused.
//
// A server decides the candidates of a batch beside the writer that
// applies the batch before it (custody's batch_ahead.go), so a sender that
// waits for each answer before it sends the next batch leaves the writer
// idle while the answer travels back, the next request is read and its
// candidates are checked. With two batches in flight the next one is
// ready when the writer is done with the one before.
//
// What two in flight change is what a refusal means. The batches are sent
// in their order and no batch is sent once one is refused, but a batch sent
// before the refusal was known is still answered and may be written: a
// batch refused is not the end of what is in the store. Send waits for
// every batch in flight and reports each one's outcome, so that the caller
// can say exactly which were written. Batches that must be applied in
// their order (two versions of one key, say) are never in flight
// together: see Send's after.
package bulk

import "context"

// DefaultParallel is how many batches custody import keeps in flight.
const DefaultParallel = 2

// Outcome is what became of one batch.
type Outcome int

const (
	// NotSent: the import stopped before it.
	NotSent Outcome = iota
	// Written: its send returned no error.
	Written
	// Refused: its send returned an error.
	Refused
)

// Send calls send(ctx, i) for the batches i = 0 … n−1 in that order, with
// at most parallel of them (at least 1) unanswered at once. A batch i for
// which after(i) is a batch j before it (0 ≤ j < i) is sent only once
// batches 0 … j have all been answered (after may be nil; −1 is none). Once a send returns an error no batch is sent any
// more; those already sent are waited for. answered(i, err) (if not nil)
// is called on Send's goroutine as batch i is answered, with the error its
// send returned, in the order the answers come.
//
// Send returns each batch's outcome and, for those refused, the error.
func Send(ctx context.Context, n, parallel int, after func(i int) int, send func(ctx context.Context, i int) error, answered func(i int, err error)) ([]Outcome, []error) {
	parallel = max(parallel, 1)
	out, errs := make([]Outcome, n), make([]error, n)
	done := make([]bool, n)
	first := 0 // the first batch not answered
	type answer struct {
		i   int
		err error
	}
	answers := make(chan answer, parallel)
	next, busy, stopped := 0, 0, false
	ready := func(i int) bool {
		if after == nil {
			return true
		}
		j := after(i)
		return j < first || j >= i
	}
	for {
		for !stopped && next < n && busy < parallel && ready(next) {
			i := next
			next++
			busy++
			go func() { answers <- answer{i, send(ctx, i)} }()
		}
		if busy == 0 {
			return out, errs
		}
		a := <-answers
		busy--
		done[a.i] = true
		for first < n && done[first] {
			first++
		}
		if a.err != nil {
			out[a.i], errs[a.i], stopped = Refused, a.err, true
		} else {
			out[a.i] = Written
		}
		if answered != nil {
			answered(a.i, a.err)
		}
	}
}
