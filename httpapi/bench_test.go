package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
)

// benchClient posts JSON with a token over a client tuned for many
// concurrent loopback connections.
func benchClient(b *testing.B, e *env, token string) func(path string, body any, want int) {
	tr := e.srv.Client().Transport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 256
	c := &http.Client{Transport: tr}
	b.Cleanup(tr.CloseIdleConnections)
	return func(path string, body any, want int) {
		j, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", e.srv.URL+path, bytes.NewReader(j))
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := c.Do(req)
		if err != nil {
			b.Error(err)
			return
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != want {
			b.Errorf("status %d, want %d", res.StatusCode, want)
		}
	}
}

// BenchmarkHTTPWrite measures admitted writes over loopback from concurrent
// clients (go test -run X -bench HTTPWrite -cpu 1,2 ./httpapi; SetParallelism
// makes 32 clients per CPU).
func BenchmarkHTTPWrite(b *testing.B) {
	e := newEnv(b, Options{RatePerSecond: -1})
	tok := e.principal("acme", "alice", []string{"user"})
	post := benchClient(b, e, tok)
	var n atomic.Int64
	b.SetParallelism(32)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			post("/v1/memories", MemoryRequest{Namespace: "bench", Key: fmt.Sprintf("k%d", i), Class: "fact",
				Body: fmt.Sprintf("benchmark memory number %d about invoices and payees", i), Channel: "user"}, http.StatusCreated)
		}
	})
}

// BenchmarkHTTPSearch measures searches over loopback against 2,000
// records, 8 clients per CPU, bodies returned.
func BenchmarkHTTPSearch(b *testing.B) {
	e := newEnv(b, Options{RatePerSecond: -1})
	tok := e.principal("acme", "alice", []string{"user"})
	post := benchClient(b, e, tok)
	words := []string{"invoice", "payee", "holiday", "meeting", "summary", "doctor", "garden", "train"}
	for i := range 2000 {
		post("/v1/memories", MemoryRequest{Namespace: "bench", Class: "episode", Channel: "user",
			Body: fmt.Sprintf("%s and %s note %d", words[i%len(words)], words[(i/8)%len(words)], i)}, http.StatusCreated)
	}
	var n atomic.Int64
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			post("/v1/search", SearchRequest{Query: words[i%8] + " " + words[(i/8)%8]}, http.StatusOK)
		}
	})
}
