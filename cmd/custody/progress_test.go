package main

import (
	"bytes"
	"testing"
	"time"
)

func TestProgressLine(t *testing.T) {
	for _, tc := range []struct {
		done, total uint64
		elapsed     time.Duration
		want        string
	}{
		{0, 100, 0, "importing [........................] 0/100   0%"},
		{25, 100, 10 * time.Second, "importing [######..................] 25/100  25%  about 30s left"},
		{100, 100, time.Minute, "importing [########################] 100/100 100%"},
		{7, 0, time.Second, "importing 7"},
	} {
		if got := progressLine("importing", tc.done, tc.total, tc.elapsed); got != tc.want {
			t.Errorf("progressLine(%d, %d, %v) = %q, want %q", tc.done, tc.total, tc.elapsed, got, tc.want)
		}
	}
}

// Off a terminal progress writes nothing.
func TestProgressSilentOffTerminal(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, "importing")
	p.update(1, 2)
	p.done()
	if buf.Len() != 0 {
		t.Errorf("progress wrote %q to a buffer", buf.String())
	}
}
