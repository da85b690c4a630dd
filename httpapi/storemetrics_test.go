package httpapi

import (
	"regexp"
	"strconv"
	"testing"
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
