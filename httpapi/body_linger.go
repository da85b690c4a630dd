package httpapi

import (
	"io"
	"net/http"
	"time"
)

// A request answered before its body was read to the end (refused for
// the body budget, past a route's size limit, a batch refused at an
// item) is answered at once and its connection closed: the server does
// not read megabytes it will not use before answering. But a connection
// closed while the client is still sending is reset by the kernel as
// soon as more of its bytes arrive, and a reset can reach the client
// before it has read the answer, which then never sees its 503 and
// Retry-After, only "connection reset by peer". So the answer is flushed
// first, and the rest of the body read and thrown away, at most
// lingerBytes of it and for at most lingerWait, before the connection
// closes: what a client sends in that time is read, not reset, and
// nothing of it is kept (the budget's bytes are already given back).
const (
	lingerBytes = 64 << 20
	lingerWait  = 2 * time.Second
)

// linger flushes the answer and reads the unread rest of body, bounded.
func linger(w http.ResponseWriter, body io.Reader) {
	rc := http.NewResponseController(w)
	_ = rc.EnableFullDuplex() // read the body after the answer was written
	if err := rc.Flush(); err != nil {
		return
	}
	if err := rc.SetReadDeadline(time.Now().Add(lingerWait)); err != nil {
		return
	}
	_, _ = io.CopyN(io.Discard, body, lingerBytes)
}
