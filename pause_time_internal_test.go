package custody

import (
	"strconv"
	"testing"
	"time"
)

// TestPauseTimesOfOlderEntries: pause entries state times in RFC 3339, as
// record entries do; entries written before, in Unix nanoseconds, still
// state the same instant, and only that one.
func TestPauseTimesOfOlderEntries(t *testing.T) {
	at := time.Date(2026, 11, 30, 8, 1, 2, 345678901, time.UTC)
	now := fmtTime(&at)
	if now != "2026-11-30T08:01:02.345678901Z" {
		t.Fatalf("a pause time is logged as %q", now)
	}
	legacy := strconv.FormatInt(at.UnixNano(), 10)
	for _, c := range []struct {
		field, logged string
		same          bool
	}{
		{"created_at", now, true},
		{"created_at", legacy, true},
		{"resumed_at", legacy, true},
		{"until", strconv.FormatInt(at.UnixNano()+1, 10), false},
		{"created_at", "2026-11-30T08:01:02Z", false},
		{"reason", legacy, false}, // not a time: compared as it is
		{"until", "", false},
	} {
		if got := sameDetail(c.field, c.logged, now); got != c.same {
			t.Errorf("sameDetail(%s, %q, %q) = %v, want %v", c.field, c.logged, now, got, c.same)
		}
	}
	if !sameDetail("until", "", "") {
		t.Error("no until logged and none stored differ")
	}
}
