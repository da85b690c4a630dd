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

// streams lifts the connection's read and write deadlines for event
// streams, so the server's timeouts cut slow clients but not a stream that
// is meant to stay open: at once for a request that opens one (GET,
// Accept: text/event-stream), and for any other request (an MCP POST whose
// answer streams) when its answer turns out to be text/event-stream, by
// which time its body has been read.
func streams(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isStreamRequest(r) {
			liftDeadlines(w)
			h.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(&streamWriter{ResponseWriter: w}, r)
	})
}

// liftDeadlines clears the connection's read and write deadlines. Errors
// mean the writer cannot change deadlines (a test recorder); the stream
// then lives under the server's timeouts.
func liftDeadlines(w http.ResponseWriter) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
}

// streamWriter lifts the deadlines when its answer starts as an event
// stream.
type streamWriter struct {
	http.ResponseWriter
	started bool
}

func (w *streamWriter) start() {
	if w.started {
		return
	}
	w.started = true
	if mt, _, _ := mime.ParseMediaType(w.Header().Get("Content-Type")); mt == "text/event-stream" {
		liftDeadlines(w.ResponseWriter)
	}
}

func (w *streamWriter) WriteHeader(code int) {
	w.start()
	w.ResponseWriter.WriteHeader(code)
}

func (w *streamWriter) Write(b []byte) (int, error) {
	w.start()
	return w.ResponseWriter.Write(b)
}

// Flush lets streaming answers through.
func (w *streamWriter) Flush() {
	w.start()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the underlying writer.
func (w *streamWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// isStreamAnswer reports whether a request and its answer were an event
// stream, which the latency histogram leaves out.
func isStreamAnswer(r *http.Request, w http.ResponseWriter) bool {
	if r.Method != http.MethodGet {
		return false
	}
	mt, _, _ := mime.ParseMediaType(w.Header().Get("Content-Type"))
	return mt == "text/event-stream"
}
