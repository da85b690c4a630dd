package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/custody-mem/custody"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/tlog"
)

// metricValue is the value of an unlabelled metric in a /metrics answer.
func metricValue(t *testing.T, text, name string) float64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + name + ` (\S+)$`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("metrics lack %s:\n%s", name, text)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatalf("%s = %q: %v", name, m[1], err)
	}
	return v
}

// The review queue's depth and the age of its oldest item are gauges in
// /metrics, across tenants; working the queue brings them back to zero.
func TestReviewQueueGauges(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store, err := sqlite.Open(ctx, filepath.Join(dir, "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	key, _, err := tlog.LoadOrCreateServerKey(filepath.Join(dir, "server.key"))
	if err != nil {
		t.Fatal(err)
	}
	written := time.Now().Add(-2 * time.Hour) // the candidates' clock: two hours ago
	svc, err := custody.New(store, key, custody.Options{Now: func() time.Time { return written }})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, ctx: ctx, svc: svc, api: New(svc, Options{Logger: slog.New(slog.DiscardHandler)})}
	e.srv = httptest.NewServer(e.api.Handler())
	defer e.srv.Close()
	scrape := func() (float64, float64) {
		m := e.do("", "GET", "/metrics", nil)
		want(t, m, http.StatusOK, "")
		return metricValue(t, m.String(), "custody_review_queue_depth"), metricValue(t, m.String(), "custody_review_queue_oldest_age_seconds")
	}
	if d, a := scrape(); d != 0 || a != 0 {
		t.Fatalf("empty queue: depth %v, age %v; want 0, 0", d, a)
	}
	rev := e.principal("acme", "rita", []string{"reviewer"})
	e.principal("acme", "alice", []string{"user"})
	e.principal("globex", "bob", []string{"user"})
	harness := e.principal("acme", "harness", []string{"agent"}, "tool:web")
	other := e.principal("globex", "harness", []string{"agent"}, "tool:web")
	var ids []string
	for _, w := range []struct{ tok, sub string }{{harness, "alice"}, {harness, "alice"}, {other, "bob"}} {
		r := e.do(w.tok, "POST", "/v1/memories", MemoryRequest{Namespace: "notes", Class: "fact", Body: "from the web " + w.sub, Channel: "tool:web", Subject: w.sub})
		want(t, r, http.StatusAccepted, "")
		ids = append(ids, r.json(t)["id"].(string))
	}
	d, a := scrape()
	if d != 3 || a < 7200 {
		t.Fatalf("three held items written two hours ago: depth %v, age %v s; want 3 and at least 7200", d, a)
	}
	for _, id := range ids[:2] {
		want(t, e.do(rev, "POST", "/v1/review/"+id+"/reject", RejectRequest{Reason: "spam"}), http.StatusOK, "")
	}
	if d, _ := scrape(); d != 1 {
		t.Fatalf("after two rejections: depth %v, want 1 (the other tenant's item)", d)
	}
}
