package mcpserver_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/custody-mem/custody"
	"github.com/custody-mem/custody/embed"
	"github.com/custody-mem/custody/mcpserver"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/tlog"
)

// TestSearchModes: memory_search takes mode; by default (an embedder is
// configured) it is hybrid and finds a paraphrase lexical search misses;
// each memory names the lists that found it; an unknown mode is a tool
// error.
func TestSearchModes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "custody.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	key, _, err := tlog.LoadOrCreateServerKey(filepath.Join(dir, "server.key"))
	if err != nil {
		t.Fatal(err)
	}
	emb, err := embed.NewBuiltin(0)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := custody.New(st, key, custody.Options{Now: func() time.Time { return testNow }, Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, ctx: ctx, svc: svc, srv: mcpserver.New(svc, mcpserver.Options{})}
	p, _ := f.principal(t, "acme", "alice", []string{"user"}, []string{"agent"})
	cl := f.connect(t, f.act(t, p, ""))
	ok[mcpserver.RememberOutput](cl, mcpserver.ToolRemember, map[string]any{"namespace": "prefs", "class": "preference", "body": "I like short answers"})
	if _, err := svc.EmbedPending(ctx); err != nil {
		t.Fatal(err)
	}
	out, txt := ok[mcpserver.SearchOutput](cl, mcpserver.ToolSearch, map[string]any{"query": "brief replies"})
	if out.Mode != "hybrid" || len(out.Items) != 1 || !slices.Equal(out.Items[0].Lists, []string{"semantic"}) || !strings.Contains(txt, "lists=semantic") {
		t.Errorf("default search: %+v\n%s\nwant the paraphrase, hybrid, by the semantic list", out, txt)
	}
	out, _ = ok[mcpserver.SearchOutput](cl, mcpserver.ToolSearch, map[string]any{"query": "brief replies", "mode": "lexical"})
	if out.Mode != "lexical" || len(out.Items) != 0 {
		t.Errorf("lexical search: %+v, want nothing", out)
	}
	if msg := cl.fails(mcpserver.ToolSearch, map[string]any{"query": "brief replies", "mode": "fuzzy"}); !strings.Contains(msg, "mode") {
		t.Errorf("mode fuzzy: %q, want an error naming mode", msg)
	}
}
