package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// progressEvery is how often a progress line is redrawn at most.
const progressEvery = 200 * time.Millisecond

// progress draws "label [#####.......] done/total  42%  about 12s left" on
// a terminal, redrawn in place at most every progressEvery, and nothing
// when w is not a terminal (a file, a pipe, a test's buffer). The long
// verbs (verify, reindex, restore, import) report through it.
type progress struct {
	w     io.Writer
	label string
	start time.Time
	last  time.Time
	on    bool
}

func newProgress(w io.Writer, label string) *progress {
	return &progress{w: w, label: label, start: time.Now(), on: isTerminal(w)}
}

// isTerminal reports whether w is a character device.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func (p *progress) update(done, total uint64) {
	if !p.on {
		return
	}
	now := time.Now()
	if now.Sub(p.last) < progressEvery {
		return
	}
	p.last = now
	fmt.Fprintf(p.w, "\r\033[K%s", progressLine(p.label, done, total, now.Sub(p.start)))
}

// done clears the line.
func (p *progress) done() {
	if p.on {
		fmt.Fprintf(p.w, "\r\033[K")
	}
}

// progressWidth is the bar's width in characters.
const progressWidth = 24

// progressLine is the line drawn for done of total after elapsed: with a
// bar and an estimate of the time left once there is something to go on.
func progressLine(label string, done, total uint64, elapsed time.Duration) string {
	if total == 0 {
		return fmt.Sprintf("%s %d", label, done)
	}
	done = min(done, total)
	filled := int(done * progressWidth / total)
	line := fmt.Sprintf("%s [%s%s] %d/%d %3d%%", label, strings.Repeat("#", filled), strings.Repeat(".", progressWidth-filled),
		done, total, done*100/total)
	if done > 0 && done < total && elapsed > 0 {
		left := time.Duration(float64(elapsed) * float64(total-done) / float64(done))
		line += "  about " + left.Round(time.Second).String() + " left"
	}
	return line
}
