package console_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// axePath is axe-core's script, installed by npm ci in testdata/node
// (.ci/run does it).
var axePath = filepath.Join("testdata", "node", "node_modules", "axe-core", "axe.min.js")

// axeSource reads axe-core. Without it the browser tests skip, unless
// CI=true: then they fail.
func axeSource(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(axePath)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("axe-core is not installed (%v); run npm ci in console/testdata/node", err)
		}
		t.Skipf("axe-core is not installed (%v); run npm ci in console/testdata/node to run the browser tests", err)
	}
	return string(b)
}

// violation is what axe-core says of one rule a page breaks.
type violation struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"`
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

// axeCheck runs axe-core on the page in ctx and fails the test on every
// serious or critical violation.
func axeCheck(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	if !eval[bool](t, ctx, `typeof axe !== 'undefined'`) {
		// DevTools evaluation is not bound by the page's CSP.
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](axeSource(t)+";true")); err != nil {
			t.Fatalf("injecting axe-core: %v", err)
		}
	}
	vs, err := chromedp.Run(ctx, chromedp.Evaluate[[]violation](`axe.run(document, {resultTypes: ['violations']}).then(r => r.violations
		.filter(v => v.impact === 'serious' || v.impact === 'critical')
		.map(v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 5).map(n => n.target.join(' '))})))`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("running axe-core on %s: %v", what, err)
	}
	for _, v := range vs {
		t.Errorf("axe-core on %s: %s (%s): %s at %s", what, v.ID, v.Impact, v.Help, strings.Join(v.Nodes, "; "))
	}
}

// viewport is one of the sizes every page is checked at.
type viewport struct {
	name          string
	width, height int64
	scale         float64
}

// viewports: a desktop window, a phone, and 200% zoom of a 1280-pixel
// window (a 640-pixel layout viewport at device scale 2).
var viewports = []viewport{{"1280px", 1280, 900, 1}, {"400px", 400, 800, 1}, {"200% zoom", 640, 450, 2}}

// atEverySize checks the page in ctx at each viewport: axe-core finds no
// serious or critical violation and nothing is wider than the viewport.
// It leaves the window at 1280 pixels.
func atEverySize(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	for _, v := range viewports {
		run(t, ctx, "sizing to "+v.name, chromedp.EmulateViewport(v.width, v.height, chromedp.EmulateScale(v.scale)))
		until(t, ctx, "the layout at "+v.name, "window.innerWidth === "+itoa(v.width))
		axeCheck(t, ctx, page+" at "+v.name)
		// The page may be wider for a frame while it lays itself out at
		// the new size (a scroll bar comes or goes): only a width that
		// stays past the viewport fails.
		fits := "document.documentElement.scrollWidth <= " + itoa(v.width)
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](fits, chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(2*time.Second))); err != nil {
			w := eval[int64](t, ctx, `document.documentElement.scrollWidth`)
			t.Errorf("%s at %s is %d pixels wide, wider than its viewport (%s)", page, v.name, w, eval[string](t, ctx, overflowing))
		}
	}
	run(t, ctx, "back to 1280px", chromedp.EmulateViewport(1280, 900))
}

// overflowing names the elements that reach past the viewport's right
// edge outside any scrolling box (an element inside one scrolls there,
// and does not widen the page), the innermost last.
const overflowing = `[...document.querySelectorAll('body *')].filter(e => {
		if (e.getBoundingClientRect().right <= window.innerWidth + 0.5) return false;
		for (let p = e.parentElement; p && p !== document.body; p = p.parentElement) {
			if (/(auto|scroll|hidden|clip)/.test(getComputedStyle(p).overflowX)) return false;
		}
		return true;
	}).slice(-4).map(e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (e.className && typeof e.className === 'string' ? '.' + e.className.trim().split(/\\s+/).join('.') : '') +
		' right ' + Math.round(e.getBoundingClientRect().right) + ': ' + e.outerHTML.slice(0, 80)).join('; ')`

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// tabTo presses Tab until the focused element matches the CSS selector
// sel, as a keyboard user reaches a control; at most 80 presses.
func tabTo(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	for range 80 {
		if eval[bool](t, ctx, `!!document.activeElement && document.activeElement.matches(`+quote(sel)+`)`) {
			return
		}
		run(t, ctx, "Tab", chromedp.KeyEvent(kb.Tab))
	}
	t.Fatalf("80 presses of Tab never reached %s", sel)
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `\'`) + "'" }
