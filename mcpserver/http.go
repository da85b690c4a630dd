package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/internal/bodybudget"
	"github.com/custody-mem/custody/internal/jsontext"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPHandler returns the streamable HTTP handler of custody's MCP tools;
// see Server.HTTPHandler. Use New and Server.HTTPHandler instead to be able
// to Close its streams on shutdown.
func HTTPHandler(svc *custody.Service, opts Options) http.Handler {
	return New(svc, opts).HTTPHandler()
}

type bindingKey struct{}

// binding is the caller of one HTTP request and, for a request that opens
// an MCP session, the MCP server of that session.
type binding struct {
	caller *custody.Caller
	server *mcp.Server
}

// maxPeek bounds how much of a request body is read to tell whether it
// opens an MCP session; an initialize request is far smaller.
const maxPeek = 64 << 10

// HTTPHandler returns the streamable HTTP handler of the tools. Every
// request must carry "Authorization: Bearer <token>" (401 with a JSON error
// otherwise); an agent principal names the user it acts for in the
// X-Custody-Subject header. The initialize request opens a custody session
// for that principal and subject, and the MCP session stays bound to them:
// a request for an existing MCP session with another credential or subject
// is refused (403). The Server must have been made with a service.
func (s *Server) HTTPHandler() http.Handler {
	// Requests that open no session (a protocol probe, a stray POST) are
	// answered by a server without tools.
	idle := mcp.NewServer(&mcp.Implementation{Name: "custody", Version: version()}, &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{}})
	sdk := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		if b, _ := r.Context().Value(bindingKey{}).(*binding); b != nil && b.server != nil {
			return b.server
		}
		return idle
	}, &mcp.StreamableHTTPOptions{SessionTimeout: s.opts.SessionTimeout})
	// The SDK binds a session to TokenInfo.UserID at initialize and refuses
	// any later request whose UserID differs.
	bound := auth.RequireBearerToken(func(_ context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
		b, _ := r.Context().Value(bindingKey{}).(*binding)
		if b == nil {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: bindingID(b.caller)}, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(jsonErrors(sdk))

	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		defer context.AfterFunc(s.closing, cancel)()
		r = r.WithContext(ctx)
		c, err := s.httpCaller(r)
		if err != nil {
			s.writeHTTPError(w, r, err)
			return
		}
		if r.Method == http.MethodPost && !s.checkBody(w, r) {
			return
		}
		b := &binding{caller: c}
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" && opensSession(r) {
			if b.server, _, err = s.open(r.Context(), Local(s.svc, c), bindingID(c)); err != nil {
				s.writeHTTPError(w, r, err)
				return
			}
		}
		bound.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), bindingKey{}, b)))
	})
}

var errNoToken = &custody.Error{Kind: custody.ErrUnauthenticated,
	Msg: "missing bearer token; send Authorization: Bearer <token> (custody principal add prints one)"}

// httpCaller authenticates the request's bearer token (unless an enclosing
// handler did) and resolves the subject it acts for.
func (s *Server) httpCaller(r *http.Request) (*custody.Caller, error) {
	var p *custody.Principal
	if s.opts.Principal != nil {
		p = s.opts.Principal(r.Context())
	}
	if p == nil {
		token, ok := bearer(r.Header.Get("Authorization"))
		if !ok {
			return nil, errNoToken
		}
		var err error
		if p, err = s.svc.Authenticate(r.Context(), token); err != nil {
			return nil, err
		}
	}
	c, err := s.svc.Act(r.Context(), p, strings.TrimSpace(r.Header.Get(SubjectHeader)))
	var ce *custody.Error
	if errors.As(err, &ce) && ce.Field == "subject" && errors.Is(err, custody.ErrInvalid) {
		return nil, &custody.Error{Kind: custody.ErrInvalid, Field: "subject",
			Msg: "an agent principal must name the user it acts for in the " + SubjectHeader + " header"}
	}
	return c, err
}

// bearer extracts the token of "Authorization: Bearer <token>"; the scheme
// is case-insensitive.
func bearer(header string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", false
	}
	return token, true
}

// MaxBodyBytes bounds the body of a POST to the MCP endpoint.
const MaxBodyBytes = 4 << 20

// checkBody reads a POST body whole (at most MaxBodyBytes, else 413) and
// refuses one whose JSON strings are not text (400 invalid_input naming
// the field, see jsontext.Check): the SDK's decoder would hand the tools
// U+FFFD in their place, a memory the model never sent. It puts the body
// back for the SDK and reports whether the request may go on.
func (s *Server) checkBody(w http.ResponseWriter, r *http.Request) bool {
	if r.Body == nil {
		return true
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	if errors.Is(err, bodybudget.ErrExhausted) {
		// The server is reading as many request bytes as its budget
		// allows (httpapi.Options.BodyBudget): the rest is not read.
		w.Header().Set("Retry-After", "1")
		w.Header().Set("Connection", "close")
		writeJSONError(w, http.StatusServiceUnavailable, "server_busy", "the server is reading as many request bytes as it allows at once (serve --body-budget); nothing was done: retry after the seconds in Retry-After", "")
		return false
	}
	if err != nil {
		s.writeHTTPError(w, r, &custody.Error{Kind: custody.ErrInvalid, Msg: "could not read the request body"})
		return false
	}
	if len(body) > MaxBodyBytes {
		writeJSONError(w, http.StatusRequestEntityTooLarge, "body_too_large", fmt.Sprintf("request body is larger than the limit of %d bytes", MaxBodyBytes), "")
		return false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if !json.Valid(body) {
		return true // the SDK answers malformed JSON-RPC itself
	}
	if field, problem := jsontext.Check(body); problem != "" {
		s.writeHTTPError(w, r, &custody.Error{Kind: custody.ErrInvalid, Field: field,
			Msg: fmt.Sprintf("%s %s; it would not reach memory as sent. Send UTF-8 text, with \\u surrogate escapes only in high-low pairs", field, problem)})
		return false
	}
	return true
}

// writeJSONError writes the JSON error body with status.
func writeJSONError(w http.ResponseWriter, status int, code, msg, field string) {
	b, _ := json.Marshal(ErrorBody{Error: ErrorDetail{Code: code, Message: msg, Field: field}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// opensSession reports whether a POST body holds an initialize request. It
// reads at most maxPeek bytes and puts them back.
func opensSession(r *http.Request) bool {
	if r.Body == nil {
		return false
	}
	head, err := io.ReadAll(io.LimitReader(r.Body, maxPeek))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
	if err != nil {
		return false
	}
	var one struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(head, &one) == nil {
		return one.Method == "initialize"
	}
	var batch []struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(head, &batch) == nil {
		for _, m := range batch {
			if m.Method == "initialize" {
				return true
			}
		}
	}
	return false
}

// ErrorBody is the JSON body of an HTTP error, as in the rest of custody's
// HTTP API: {"error": {"code": "...", "message": "..."}}.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail says what went wrong.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

func (s *Server) writeHTTPError(w http.ResponseWriter, r *http.Request, err error) {
	var ce *custody.Error
	msg, field := err.Error(), ""
	if errors.As(err, &ce) {
		msg, field = ce.Msg, ce.Field
	}
	status, code := http.StatusInternalServerError, "internal"
	switch {
	case errors.Is(err, custody.ErrUnauthenticated):
		status, code = http.StatusUnauthorized, "unauthenticated"
		if ce == nil {
			msg = "unknown bearer token"
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="custody"`)
	case errors.Is(err, custody.ErrPrincipalUnverified):
		status, code = http.StatusForbidden, "principal_unverified"
		var pm *custody.PrincipalMismatch
		if errors.As(err, &pm) {
			s.log.ErrorContext(r.Context(), "mcp: refused a principal whose stored state disagrees with the audit log",
				"principal", pm.Principal, "field", pm.Field, "detail", pm.Detail)
		}
	case errors.Is(err, custody.ErrSubjectNotAllowed):
		status, code, field = http.StatusForbidden, "subject_not_allowed", "subject"
	case errors.Is(err, custody.ErrForbidden):
		status, code = http.StatusForbidden, "forbidden"
	case errors.Is(err, custody.ErrInvalid):
		status, code = http.StatusBadRequest, "invalid_input"
	case errors.Is(err, custody.ErrUnavailable):
		status, code, msg = http.StatusServiceUnavailable, "unavailable", "the store is unavailable; retry later"
		w.Header().Set("Retry-After", "1")
	default:
		s.log.ErrorContext(r.Context(), "mcp: internal error", "method", r.Method, "err", err)
		msg = "internal error; the server logged it"
	}
	b, _ := json.Marshal(ErrorBody{Error: ErrorDetail{Code: code, Message: msg, Field: field}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
