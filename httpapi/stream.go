package httpapi

import (
	"mime"
	"net/http"
	"strings"
	"time"
)

// isStreamRequest reports whether r opens a long-lived event stream: a GET
// that accepts text/event-stream (the MCP streamable-HTTP stream).
func isStreamRequest(r *http.Request) bool {
	if r.Method != http.MethodGet {
		return false
	}
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && mt == "text/event-stream" {
			return true
		}
	}
	return false
}

// streams lifts the connection's read and write deadlines for requests that
// open an event stream, so the server's timeouts cut slow clients but not a
// stream that is meant to stay open.
func streams(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isStreamRequest(r) {
			rc := http.NewResponseController(w)
			// Errors mean the writer cannot change deadlines (a test
			// recorder); the stream then lives under the server's timeouts.
			_ = rc.SetReadDeadline(time.Time{})
			_ = rc.SetWriteDeadline(time.Time{})
		}
		h.ServeHTTP(w, r)
	})
}

// isStreamAnswer reports whether a request and its answer were an event
// stream, which the latency histogram leaves out.
func isStreamAnswer(r *http.Request, w http.ResponseWriter) bool {
	if r.Method != http.MethodGet {
		return false
	}
	mt, _, _ := mime.ParseMediaType(w.Header().Get("Content-Type"))
	return mt == "text/event-stream"
}
