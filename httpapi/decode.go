package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/custody-mem/custody/internal/bodybudget"
)

// decodeJSON reads one JSON object from r's body into dst, strictly: at most
// limit bytes (413 body_too_large), no unknown fields (400 unknown_field),
// one value and nothing after it, the right type for every field (400
// invalid_json naming the field), and strings that are text (400
// invalid_input naming the field; see checkText). An empty body is the zero value when
// optional, else 400.
func decodeJSON(w http.ResponseWriter, r *http.Request, limit int64, dst any, optional bool) error {
	b, err := readBody(w, r, limit)
	if err != nil {
		return err
	}
	return decodeBytes(b, dst, optional)
}

// readBody reads the whole body, at most limit bytes.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		return nil, readError(err)
	}
	return b, nil
}

// readError is the answer to a failed read of a request body: past the
// route's limit 413, past the server's body budget 503 (with Retry-After),
// too slow 408, anything else 400.
func readError(err error) error {
	var mbe *http.MaxBytesError
	var ne net.Error
	switch {
	case errors.As(err, &mbe):
		return &apiError{status: http.StatusRequestEntityTooLarge, code: codeBodyTooLarge,
			message: fmt.Sprintf("request body is larger than the limit of %d bytes", mbe.Limit)}
	case errors.Is(err, bodybudget.ErrExhausted):
		return errBusy
	case errors.As(err, &ne) && ne.Timeout():
		return &apiError{status: http.StatusRequestTimeout, code: "request_timeout",
			message: "the request body arrived too slowly and was cut; send the whole body at once"}
	}
	return badRequest(codeInvalidJSON, "", "could not read the request body")
}

// decodeBytes is the strict decoding of decodeJSON on a body already read.
func decodeBytes(b []byte, dst any, optional bool) error {
	if len(bytes.TrimSpace(b)) == 0 {
		if optional {
			return nil
		}
		return badRequest(codeInvalidJSON, "", "request body is empty; send a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return badRequest(codeInvalidJSON, "", "request body must hold a single JSON object and nothing after it")
	}
	return checkText(b)
}

// jsonError turns a decoding error into a 400 that names what was wrong.
func jsonError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return badRequest(codeInvalidJSON, "", fmt.Sprintf("malformed JSON at byte %d: %v", syn.Offset, syn))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest(codeInvalidJSON, "", "malformed JSON: the body ends early")
	case errors.As(err, &typ):
		if typ.Field == "" {
			return badRequest(codeInvalidJSON, "", fmt.Sprintf("request body must be a JSON object, not %s", typ.Value))
		}
		return badRequest(codeInvalidJSON, typ.Field, fmt.Sprintf("field %q must be %s, not %s", typ.Field, jsonKind(typ.Type.String()), typ.Value))
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		field, _ := strconv.Unquote(name)
		return badRequest(codeUnknownField, field, fmt.Sprintf("unknown field %s; control fields such as channel, state, authority and owner come from the credential and the policy, never from the request body", name))
	}
	return badRequest(codeInvalidJSON, "", "malformed JSON: "+err.Error())
}

// jsonKind names a Go type the way a JSON client thinks of it.
func jsonKind(goType string) string {
	switch {
	case goType == "string":
		return "a string"
	case goType == "bool":
		return "a boolean"
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	case strings.HasPrefix(goType, "map["), strings.HasPrefix(goType, "struct"), strings.Contains(goType, "."):
		return "an object"
	case strings.Contains(goType, "int"), strings.Contains(goType, "float"):
		return "a number"
	}
	return goType
}

// queryInt reads an optional integer query parameter.
func queryInt(r *http.Request, name string) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, badRequest("invalid_input", name, fmt.Sprintf("%s=%q is not an integer", name, v))
	}
	return n, nil
}

// queryUint reads a required unsigned integer query parameter.
func queryUint(r *http.Request, name string) (uint64, error) {
	v := r.URL.Query().Get(name)
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, badRequest("invalid_input", name, fmt.Sprintf("%s=%q must be a non-negative integer", name, v))
	}
	return n, nil
}
