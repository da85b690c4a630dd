// Package mem0api serves the routes of Mem0's platform API that Mem0's own
// clients call (the mem0ai npm package's MemoryClient: add, search,
// get_all, get, update, delete, delete_all, history), on custody's service,
// so that an application moves to custody by pointing its client's host at
// a custody server (serve mounts the routes at /mem0).
//
// Nothing here is a second store or a second policy: every memory is a
// custody record written through admission, on a channel the caller's
// credential holds, and every read is a custody read, filtered inside the
// query. A Mem0 memory is a keyed record in the namespace "mem0" with key
// "mem0:<id>" and the metadata marks "mem0.memory" and "mem0.id" (which
// custody's MCP tools refuse to set): an update is a new version of its
// key, a delete retires it. Results carry custody's provenance under
// "custody", and a write admission holds says so in its answer.
//
// custody extracts nothing with a model. An add stores each message as it
// was sent: with infer false (Mem0: "store the text as-is") each message is
// an episode; with infer true (Mem0's default: "infer memories") each user
// message is a fact candidate, which admission decides as it decides any
// fact on that channel (held from a tool channel), and the other roles'
// messages are episodes. docs/mem0.md lists the differences from Mem0.
package mem0api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/internal/jsontext"
)

// Prefix is where serve mounts the routes: a Mem0 client's host is the
// server's address followed by it (http://127.0.0.1:8765/mem0).
const Prefix = "/mem0"

// DefaultNamespace is the custody namespace of Mem0 memories.
const DefaultNamespace = "mem0"

// MaxBodyBytes bounds a request body (the largest memory is custody's body
// limit; a request holds several).
const MaxBodyBytes = 4 << 20

// Options configure the routes. The zero value is usable but for the two
// functions, which the HTTP API provides.
type Options struct {
	// Namespace holds the memories (default DefaultNamespace).
	Namespace string
	// Principal returns the authenticated principal of a request (the HTTP
	// API's PrincipalFrom, behind its Mount).
	Principal func(context.Context) *custody.Principal
	// WriteError answers an error as the HTTP API does.
	WriteError func(http.ResponseWriter, *http.Request, error)
}

// API is the Mem0 routes on one service.
type API struct {
	svc  *custody.Service
	opts Options
	mux  *http.ServeMux
}

// New returns the routes on svc.
func New(svc *custody.Service, opts Options) *API {
	if opts.Namespace == "" {
		opts.Namespace = DefaultNamespace
	}
	a := &API{svc: svc, opts: opts, mux: http.NewServeMux()}
	for pattern, h := range a.routes() {
		a.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			if err := h(w, r); err != nil {
				a.opts.WriteError(w, r, err)
			}
		})
	}
	a.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]string{"code": "not_found", "message": fmt.Sprintf(
			"%s %s is not one of custody's Mem0 routes (add, search, get_all, get, update, delete, delete_all, history); docs/mem0.md lists them", r.Method, r.URL.Path)}})
	})
	return a
}

// routes are the Mem0 routes by pattern, paths relative to Prefix.
func (a *API) routes() map[string]func(http.ResponseWriter, *http.Request) error {
	return map[string]func(http.ResponseWriter, *http.Request) error{
		"GET /v1/ping/":                     a.ping,
		"POST /v3/memories/add/":            a.add,
		"POST /v3/memories/{$}":             a.getAll,
		"POST /v3/memories/search/":         a.search,
		"GET /v1/memories/{id}/{$}":         a.get,
		"PUT /v1/memories/{id}/{$}":         a.update,
		"DELETE /v1/memories/{id}/{$}":      a.delete,
		"DELETE /v1/memories/{$}":           a.deleteAll,
		"GET /v1/memories/{id}/history/{$}": a.history,
		"GET /v1/ping":                      a.ping,
		"POST /v3/memories/add":             a.add,
		"POST /v3/memories/search":          a.search,
		"GET /v1/memories/{id}/history":     a.history,
	}
}

// Handler serves the routes, paths relative to Prefix.
func (a *API) Handler() http.Handler { return a.mux }

func (a *API) ping(w http.ResponseWriter, r *http.Request) error {
	if a.opts.Principal(r.Context()) == nil {
		return custody.ErrUnauthenticated
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok", "message": "custody"})
	return nil
}

// caller is the custody caller of a request for a Mem0 user_id: the user
// the request acts for (custody's subject rule: a user principal acts for
// itself, an agent names the user).
func (a *API) caller(r *http.Request, userID string) (*custody.Caller, error) {
	p := a.opts.Principal(r.Context())
	if p == nil {
		return nil, custody.ErrUnauthenticated
	}
	return a.svc.Act(r.Context(), p, userID)
}

// decode reads a JSON body into v: at most MaxBodyBytes, text that is
// UTF-8 (a lone surrogate escape is refused, never replaced).
func decode(r *http.Request, v any) error {
	b, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	if err != nil {
		return err
	}
	if len(b) > MaxBodyBytes {
		return invalid("body", "the request body is over %d bytes; send fewer messages at once", MaxBodyBytes)
	}
	if len(strings.TrimSpace(string(b))) == 0 {
		return nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return invalid(te.Field, "%s must be a JSON %s, not %s", te.Field, kind(te.Type.Kind().String()), te.Value)
		}
		return invalid("body", "the body is not JSON (%v); send a JSON object", err)
	}
	if field, problem := jsontext.Check(b); problem != "" {
		return invalid(field, "%s %s; send text as UTF-8", orBody(field), problem)
	}
	return nil
}

func kind(k string) string {
	switch k {
	case "slice":
		return "array"
	case "map", "struct":
		return "object"
	case "float64", "int", "int64":
		return "number"
	case "bool":
		return "boolean"
	}
	return k
}

func orBody(field string) string {
	if field == "" {
		return "the body"
	}
	return field
}

func invalid(field, format string, args ...any) error {
	return &custody.Error{Kind: custody.ErrInvalid, Field: field, Msg: fmt.Sprintf(format, args...)}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, `{"error":{"code":"internal","message":"internal error; the server logged it"}}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
