package mcpserver

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"strings"
)

// jsonErrors makes the plain-text error answers of the SDK's streamable
// HTTP handler ("session user mismatch", "session not found", ...) the JSON
// error body of the rest of custody's HTTP API. Other answers, event
// streams included, pass through untouched.
func jsonErrors(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ew := &errorWriter{ResponseWriter: w}
		h.ServeHTTP(ew, r)
		ew.finish()
	})
}

// errorWriter holds back a plain-text error answer and rewrites it as JSON.
type errorWriter struct {
	http.ResponseWriter
	status int // set when an error answer is held back
	text   bytes.Buffer
}

func (w *errorWriter) WriteHeader(code int) {
	mt, _, _ := mime.ParseMediaType(w.Header().Get("Content-Type"))
	if code >= 400 && mt == "text/plain" && w.status == 0 {
		w.status = code
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *errorWriter) Write(b []byte) (int, error) {
	if w.status != 0 {
		return w.text.Write(b)
	}
	return w.ResponseWriter.Write(b)
}

// Flush lets event streams through.
func (w *errorWriter) Flush() {
	if w.status != 0 {
		return
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the underlying writer.
func (w *errorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish writes the held-back error, if any, as JSON.
func (w *errorWriter) finish() {
	if w.status == 0 {
		return
	}
	msg := strings.TrimSpace(w.text.String())
	code := "invalid_input"
	switch w.status {
	case http.StatusForbidden:
		code = "forbidden"
		if msg == "session user mismatch" {
			msg = "this MCP session was opened with another credential or for another subject; " +
				"open your own with an initialize request (no Mcp-Session-Id header)"
		}
	case http.StatusNotFound:
		code = "not_found"
		if msg == "session not found" || msg == "session is closing" {
			msg = msg + "; open a new MCP session with an initialize request (no Mcp-Session-Id header)"
		}
	case http.StatusMethodNotAllowed:
		code = "method_not_allowed"
	case http.StatusConflict:
		code = "conflict"
	case http.StatusRequestEntityTooLarge:
		code = "body_too_large"
	case http.StatusUnsupportedMediaType:
		code = "unsupported_media_type"
	}
	if w.status >= 500 {
		code = "internal"
	}
	b, _ := json.Marshal(ErrorBody{Error: ErrorDetail{Code: code, Message: msg}})
	h := w.Header()
	h.Del("X-Content-Type-Options")
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.ResponseWriter.WriteHeader(w.status)
	w.ResponseWriter.Write(append(b, '\n'))
}
