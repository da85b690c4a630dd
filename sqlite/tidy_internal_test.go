package sqlite

import (
	"testing"
	"time"
)

// While searches run, tidying pauses after each step long enough to take
// tidyShare of a core; with none, it goes on after a millisecond.
func TestTidyPausesForSearches(t *testing.T) {
	for _, c := range []struct {
		step     time.Duration
		searched bool
		want     time.Duration
	}{
		{2 * time.Millisecond, false, time.Millisecond},
		{2 * time.Millisecond, true, 6 * time.Millisecond},
		{100 * time.Microsecond, true, time.Millisecond},
		{0, true, time.Millisecond},
	} {
		if got := tidyPause(c.step, c.searched); got != c.want {
			t.Errorf("a step of %v, searched %v: pause %v, want %v", c.step, c.searched, got, c.want)
		}
	}
}
