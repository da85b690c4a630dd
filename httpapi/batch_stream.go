package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/custody-mem/custody"
)

// A batch is decoded as it arrives: the envelope's keys one by one, and
// its items one at a time, each checked as POST /v1/memories checks its
// body (strict decoding, text, its size, its record body's size, its
// expires_at) before the next is read. A batch refused at an item is not
// read further; what the server holds of a batch is the candidates
// decoded so far and one item's bytes, never the whole body beside its
// decoding. The bytes read count against the server's body budget
// (body_budget.go) until the request ends.

// itemSlack is how far a decoder may have read past an item's start
// beyond the item itself: the rest of its last read.
const itemSlack = 64 << 10

// errItemTooLarge is itemReader's error once an item passes its limit.
var errItemTooLarge = errors.New("batch item too large")

// itemReader is the batch body as the decoder reads it: it refuses to read
// more than limit bytes (and itemSlack) past start, the offset where the
// current item begins (-1 between items).
type itemReader struct {
	r     io.Reader
	read  int64
	start int64
	limit int64
	eof   bool // the body was read to its end
}

func (ir *itemReader) Read(p []byte) (int, error) {
	if ir.start >= 0 && ir.read-ir.start > ir.limit+itemSlack {
		return 0, errItemTooLarge
	}
	if len(p) > itemSlack/2 { // so that the decoder never holds more than the slack ahead
		p = p[:itemSlack/2]
	}
	n, err := ir.r.Read(p)
	ir.read += int64(n)
	ir.eof = ir.eof || err == io.EOF
	return n, err
}

// decodeBatch reads and checks the body of POST /v1/memories/batch as it
// arrives, and returns its subject and candidates. The envelope's keys are
// matched without regard to case, as encoding/json matches them (and as
// POST /v1/memories and the items are decoded), and each may be given
// once.
func (s *Server) decodeBatch(w http.ResponseWriter, r *http.Request) (string, []custody.Candidate, error) {
	ir := &itemReader{r: http.MaxBytesReader(w, r.Body, s.opts.MaxBatchBytes), start: -1, limit: s.opts.MaxBodyBytes}
	subject, cands, err := s.decodeBatchFrom(r, ir)
	if err != nil && !ir.eof {
		// The rest of the body is not read: the connection closes after
		// the answer (as past http.MaxBytesReader's limit), rather than
		// read what may be megabytes more, or wait for a client that
		// sends it slowly, before answering.
		w.Header().Set("Connection", "close")
	}
	return subject, cands, err
}

// decodeBatchFrom is decodeBatch reading the body from ir.
func (s *Server) decodeBatchFrom(r *http.Request, ir *itemReader) (string, []custody.Candidate, error) {
	dec := json.NewDecoder(ir)
	var subject string
	var cands []custody.Candidate
	var subjects []string // each item's own subject, checked at the end when the batch's was not known before the items
	tok, err := dec.Token()
	switch {
	case err == io.EOF:
		return "", nil, badRequest(codeInvalidJSON, "", "request body is empty; send a JSON object")
	case err != nil:
		return "", nil, streamError(err)
	case tok == nil: // null: an empty object
		return s.endBatch(r, dec, subject, cands, subjects)
	case tok != json.Delim('{'):
		return "", nil, badRequest(codeInvalidJSON, "", fmt.Sprintf("request body must be a JSON object, not %s", tokenKind(tok)))
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", nil, streamError(err)
		}
		key, _ := tok.(string)
		name := key
		for _, f := range []string{"subject", "items"} {
			if strings.EqualFold(key, f) {
				name = f
			}
		}
		if seen[name] {
			return "", nil, badRequest(codeInvalidJSON, name, fmt.Sprintf("field %q appears twice; give it once", name))
		}
		seen[name] = true
		switch name {
		case "subject":
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return "", nil, streamError(err)
			}
			if err := checkText(raw); err != nil {
				return "", nil, err
			}
			if err := json.Unmarshal(raw, &subject); err != nil {
				return "", nil, badRequest(codeInvalidJSON, "subject", `field "subject" must be a string`)
			}
		case "items":
			// The batch's subject is known before its items when the body
			// named it first or ?subject= names it: an item naming another
			// is refused as it arrives. Else it is checked at the end.
			batchSubject, known := r.URL.Query().Get("subject"), false
			if seen["subject"] {
				if batchSubject, err = subjectOf(r, subject); err != nil {
					return "", nil, err
				}
			}
			known = batchSubject != "" || seen["subject"]
			if cands, subjects, err = s.batchItems(dec, ir, batchSubject, known); err != nil {
				return "", nil, err
			}
		default:
			return "", nil, badRequest(codeUnknownField, key, fmt.Sprintf("unknown field %q; control fields such as channel, state, authority and owner come from the credential and the policy, never from the request body", key))
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return "", nil, streamError(err)
	}
	return s.endBatch(r, dec, subject, cands, subjects)
}

// batchItems decodes the items array, one item at a time, each as
// POST /v1/memories decodes its body. An item naming another subject than
// subject is refused when known.
func (s *Server) batchItems(dec *json.Decoder, ir *itemReader, subject string, known bool) ([]custody.Candidate, []string, error) {
	tok, err := dec.Token()
	switch {
	case err != nil:
		return nil, nil, streamError(err)
	case tok == nil:
		return nil, nil, nil
	case tok != json.Delim('['):
		return nil, nil, badRequest(codeInvalidJSON, "items", fmt.Sprintf(`field "items" must be an array, not %s`, tokenKind(tok)))
	}
	var cands []custody.Candidate
	var subjects []string
	for i := 0; dec.More(); i++ {
		if i == custody.MaxBatch {
			return nil, nil, badRequest("invalid_input", "items", fmt.Sprintf("a batch holds at most %d items and this one has more; send it in parts of %d", custody.MaxBatch, custody.MaxBatch))
		}
		ir.start = dec.InputOffset()
		var raw json.RawMessage
		err := dec.Decode(&raw)
		ir.start = -1
		if errors.Is(err, errItemTooLarge) || int64(len(raw)) > s.opts.MaxBodyBytes {
			return nil, nil, &apiError{status: http.StatusRequestEntityTooLarge, code: codeBodyTooLarge, field: fmt.Sprintf("items[%d]", i),
				message: fmt.Sprintf("items[%d] is larger than the limit of one write (%d bytes, what POST /v1/memories takes); nothing was written. Send a smaller item, or store a reference to the large content", i, s.opts.MaxBodyBytes)}
		}
		if err != nil {
			if err := streamError(err); err != errBusy {
				return nil, nil, itemError(i, err)
			}
			return nil, nil, errBusy
		}
		var req MemoryRequest
		if err := decodeBytes(raw, &req, false); err != nil {
			return nil, nil, itemError(i, err)
		}
		if known && req.Subject != "" && req.Subject != subject {
			return nil, nil, itemError(i, errOtherSubject)
		}
		c, err := req.candidate()
		if err != nil {
			return nil, nil, itemError(i, err)
		}
		if max := s.svc.MaxBodyBytes(); len(c.Body) > max {
			return nil, nil, itemError(i, badRequest("invalid_input", "body", fmt.Sprintf("body is %d bytes; the limit is %d: store a shorter body, or a reference to the content", len(c.Body), max)))
		}
		cands, subjects = append(cands, c), append(subjects, req.Subject)
	}
	if _, err := dec.Token(); err != nil { // the closing bracket
		return nil, nil, streamError(err)
	}
	return cands, subjects, nil
}

// errOtherSubject refuses an item that names another subject than its
// batch.
var errOtherSubject = badRequest("invalid_input", "subject", "an item may not name another subject than the batch's; send one batch per subject")

// endBatch checks that nothing follows the batch object and that no item
// names another subject than the batch's.
func (s *Server) endBatch(r *http.Request, dec *json.Decoder, batchSubject string, cands []custody.Candidate, subjects []string) (string, []custody.Candidate, error) {
	if _, err := dec.Token(); err != io.EOF {
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !isSyntax(err) {
			return "", nil, streamError(err)
		}
		return "", nil, badRequest(codeInvalidJSON, "", "request body must hold a single JSON object and nothing after it")
	}
	subject, err := subjectOf(r, batchSubject)
	if err != nil {
		return "", nil, err
	}
	for i, sub := range subjects {
		if sub != "" && sub != subject {
			return "", nil, itemError(i, errOtherSubject)
		}
	}
	return subject, cands, nil
}

// streamError is the answer to a decoding error of a body read as it
// arrives: a failed read as readError says, malformed JSON as jsonError.
func streamError(err error) error {
	if isSyntax(err) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return jsonError(err)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return jsonError(err)
	}
	return readError(err)
}

func isSyntax(err error) bool {
	var se *json.SyntaxError
	return errors.As(err, &se)
}

// tokenKind names a JSON token the way a client thinks of it.
func tokenKind(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		if v == '[' {
			return "an array"
		}
		return "a " + strings.Trim(string(v), " ")
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, json.Number:
		return "a number"
	}
	return "null"
}
