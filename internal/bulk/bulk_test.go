package bulk

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// Two batches are in flight at once, never three.
func TestSendKeepsParallelInFlight(t *testing.T) {
	const n, parallel = 6, 2
	started := make(chan int, n)
	release := make([]chan struct{}, n)
	for i := range release {
		release[i] = make(chan struct{})
	}
	var inFlight, most atomic.Int32
	go func() {
		// Batches 0 and 1 start before either is answered; then each
		// answer lets the next one go.
		if a, b := <-started, <-started; a+b != 1 {
			t.Errorf("the first batches started were %d and %d, want 0 and 1", a, b)
		}
		for i := range n {
			close(release[i])
			if i+2 < n {
				<-started
			}
		}
	}()
	out, errs := Send(t.Context(), n, parallel, nil, func(_ context.Context, i int) error {
		c := inFlight.Add(1)
		for m := most.Load(); c > m && !most.CompareAndSwap(m, c); m = most.Load() {
		}
		started <- i
		<-release[i]
		inFlight.Add(-1)
		return nil
	}, nil)
	if got := most.Load(); got != parallel {
		t.Errorf("at most %d batches were in flight, want %d", got, parallel)
	}
	for i := range n {
		if out[i] != Written || errs[i] != nil {
			t.Errorf("batch %d: %v, %v; want written", i, out[i], errs[i])
		}
	}
}

// A batch refused stops the sending; the batch in flight beside it is
// waited for and written, and what comes after is not sent.
func TestSendStopsAtARefusal(t *testing.T) {
	refusal := errors.New("line 7: bad namespace")
	release0 := make(chan struct{})
	var mu sync.Mutex
	var sent, order []int
	out, errs := Send(t.Context(), 4, 2, nil, func(_ context.Context, i int) error {
		mu.Lock()
		sent = append(sent, i)
		mu.Unlock()
		switch i {
		case 0:
			<-release0 // answered after batch 1's refusal is known
			return nil
		case 1:
			return refusal
		}
		return nil
	}, func(i int, err error) {
		order = append(order, i)
		if i == 1 {
			close(release0)
		}
	})
	if !slices.Equal(sent, []int{0, 1}) && !slices.Equal(sent, []int{1, 0}) {
		t.Errorf("sent %v; want batches 0 and 1 only", sent)
	}
	if !slices.Equal(order, []int{1, 0}) {
		t.Errorf("answered %v, want [1 0]", order)
	}
	if want := []Outcome{Written, Refused, NotSent, NotSent}; !slices.Equal(out, want) {
		t.Errorf("outcomes %v, want %v", out, want)
	}
	if errs[1] != refusal || errs[0] != nil || errs[2] != nil {
		t.Errorf("errors %v; want batch 1's refusal only", errs)
	}
}

// One at a time, a refusal stops the import right there.
func TestSendOneAtATime(t *testing.T) {
	var sent []int
	out, _ := Send(t.Context(), 4, 1, nil, func(_ context.Context, i int) error {
		sent = append(sent, i) // one at a time: no lock needed, and -race says so
		if i == 1 {
			return errors.New("refused")
		}
		return nil
	}, nil)
	if !slices.Equal(sent, []int{0, 1}) {
		t.Errorf("sent %v, want [0 1]", sent)
	}
	if want := []Outcome{Written, Refused, NotSent, NotSent}; !slices.Equal(out, want) {
		t.Errorf("outcomes %v, want %v", out, want)
	}
}

// A batch that must follow another is sent only once that one (and every
// batch before it) is answered, even with room in flight; the batches
// after it wait in line.
func TestSendAfter(t *testing.T) {
	release0 := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release0) }) }
	var answered0 atomic.Bool
	out, _ := Send(t.Context(), 3, 2, func(i int) int {
		if i == 1 {
			free() // Send asks, so it holds batch 1 back: let batch 0 end
			return 0
		}
		return -1
	}, func(_ context.Context, i int) error {
		switch i {
		case 0:
			<-release0
		case 1:
			if !answered0.Load() {
				t.Error("batch 1 was sent before batch 0, which it follows, was answered")
				free()
			}
		}
		return nil
	}, func(i int, err error) {
		if i == 0 {
			answered0.Store(true)
		}
	})
	if want := []Outcome{Written, Written, Written}; !slices.Equal(out, want) {
		t.Errorf("outcomes %v, want %v", out, want)
	}
}

// A cancelled context refuses what is sent with it, and nothing more goes.
func TestSendCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var calls atomic.Int32
	out, errs := Send(ctx, 5, 2, nil, func(ctx context.Context, i int) error {
		calls.Add(1)
		return ctx.Err()
	}, nil)
	if c := calls.Load(); c < 1 || c > 2 {
		t.Errorf("%d batches were sent with a cancelled context; want the first two at most", c)
	}
	for i := 2; i < 5; i++ {
		if out[i] != NotSent {
			t.Errorf("batch %d: %v after a cancellation", i, out[i])
		}
	}
	if !errors.Is(errs[0], context.Canceled) {
		t.Errorf("batch 0: %v, want the cancellation", errs[0])
	}
}

// after names the last batch to wait for, and the batches before it are
// waited for too: batch 2 follows batch 1, answered first, and batch 0,
// still in flight.
func TestSendAfterWaitsForEveryBatchBefore(t *testing.T) {
	release0 := make(chan struct{})
	var answered0 atomic.Bool
	out, _ := Send(t.Context(), 3, 2, func(i int) int {
		if i == 2 {
			return 1
		}
		return -1
	}, func(_ context.Context, i int) error {
		switch i {
		case 0:
			<-release0
		case 2:
			if !answered0.Load() {
				t.Error("batch 2 was sent while batch 0 was in flight")
			}
		}
		return nil
	}, func(i int, err error) {
		switch i {
		case 0:
			answered0.Store(true)
		case 1:
			close(release0) // batch 1 is answered first
		}
	})
	if want := []Outcome{Written, Written, Written}; !slices.Equal(out, want) {
		t.Errorf("outcomes %v, want %v", out, want)
	}
}
