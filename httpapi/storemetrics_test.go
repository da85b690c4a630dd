package httpapi

import (
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/embed"
	"github.com/custody-mem/custody/sqlite"
)

// /metrics reports the size of the SQLite WAL file, which grows with a
// write.
func TestMetricsWALBytes(t *testing.T) {
	e := newEnv(t, Options{})
	alice := e.principal("acme", "alice", []string{"user"})
	want(t, e.do(alice, "POST", "/v1/memories", MemoryRequest{Namespace: "n", Class: "fact", Body: "x", Channel: "user"}), 201, "")
	// The store's background work (index moves, checkpoints) may change the
	// WAL while /metrics is read: compare a scrape that the file's size did
	// not move around, before and after it.
	for range 100 {
		before := e.store.WALBytes()
		m := e.do("", "GET", "/metrics", nil)
		want(t, m, 200, "")
		match := regexp.MustCompile(`(?m)^custody_sqlite_wal_bytes (\S+)$`).FindStringSubmatch(m.String())
		if match == nil {
			t.Fatalf("metrics lack custody_sqlite_wal_bytes:\n%s", m)
		}
		if after := e.store.WALBytes(); after != before {
			continue
		}
		v, err := strconv.ParseFloat(match[1], 64)
		if err != nil || v <= 0 || v != float64(before) {
			t.Errorf("custody_sqlite_wal_bytes = %s; want the WAL file's size, %d", match[1], before)
		}
		return
	}
	t.Fatal("the WAL file's size moved around every one of 100 scrapes")
}

// /metrics reports the in-memory copy of the search index: the records it
// holds, its size, and the searches it ranked.
func TestMetricsSearchMemory(t *testing.T) {
	e := newEnv(t, Options{})
	e.store.PrepareSearch()
	e.store.AwaitSearchIndex()
	alice := e.principal("acme", "alice", []string{"user"})
	want(t, e.do(alice, "POST", "/v1/memories", MemoryRequest{Namespace: "n", Class: "fact", Body: "the plumber's invoice", Channel: "user"}), 201, "")
	want(t, e.do(alice, "POST", "/v1/search", SearchRequest{Query: "plumber"}), 200, "")
	m := e.do("", "GET", "/metrics", nil)
	want(t, m, 200, "")
	for metric, ok := range map[string]func(float64) bool{
		`custody_sqlite_search_memory_records`:              func(v float64) bool { return v == 1 },
		`custody_sqlite_search_memory_bytes`:                func(v float64) bool { return v > 0 },
		`custody_sqlite_searches_ranked_total{by="memory"}`: func(v float64) bool { return v == 1 },
		`custody_sqlite_searches_ranked_total{by="fts5"}`:   func(v float64) bool { return v == 0 },
	} {
		match := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(metric) + ` (\S+)$`).FindStringSubmatch(m.String())
		if match == nil {
			t.Fatalf("metrics lack %s:\n%s", metric, m)
		}
		if v, err := strconv.ParseFloat(match[1], 64); err != nil || !ok(v) {
			t.Errorf("%s = %s", metric, match[1])
		}
	}
}

// /metrics reports the texts the SQLite store keeps for its searches'
// rankings: a hybrid search reads its candidates' rows once, and the
// same search again takes them from memory.
func TestMetricsSearchTexts(t *testing.T) {
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	emb, err := embed.NewGlove()
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvOn(t, st, nil, custody.Options{Embedder: emb})
	alice := e.principal("acme", "alice", []string{"user"})
	want(t, e.do(alice, "POST", "/v1/memories", MemoryRequest{Namespace: "n", Class: "fact", Body: "the plumber's invoice", Channel: "user"}), 201, "")
	read := func() map[string]float64 {
		m := e.do("", "GET", "/metrics", nil)
		want(t, m, 200, "")
		out := map[string]float64{}
		for _, metric := range []string{`custody_sqlite_search_texts_records`, `custody_sqlite_search_texts_bytes`,
			`custody_sqlite_search_rows_total{from="memory"}`, `custody_sqlite_search_rows_total{from="rows"}`} {
			match := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(metric) + ` (\S+)$`).FindStringSubmatch(m.String())
			if match == nil {
				t.Fatalf("metrics lack %s:\n%s", metric, m)
			}
			out[metric], _ = strconv.ParseFloat(match[1], 64)
		}
		return out
	}
	want(t, e.do(alice, "POST", "/v1/search", SearchRequest{Query: "plumber", Mode: "hybrid"}), 200, "")
	first := read()
	if first[`custody_sqlite_search_texts_records`] != 1 || first[`custody_sqlite_search_texts_bytes`] <= 0 || first[`custody_sqlite_search_rows_total{from="rows"}`] < 1 {
		t.Fatalf("after one search: %v, want the record read from its row and kept", first)
	}
	want(t, e.do(alice, "POST", "/v1/search", SearchRequest{Query: "plumber", Mode: "hybrid"}), 200, "")
	second := read()
	if second[`custody_sqlite_search_rows_total{from="memory"}`] <= first[`custody_sqlite_search_rows_total{from="memory"}`] ||
		second[`custody_sqlite_search_rows_total{from="rows"}`] != first[`custody_sqlite_search_rows_total{from="rows"}`] {
		t.Fatalf("the same search again: %v after %v, want its records taken from memory alone", second, first)
	}
}
