package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/custody-mem/custody"
)

type principalKey struct{}

// PrincipalFrom returns the principal that Authenticated put in ctx, or nil.
func PrincipalFrom(ctx context.Context) *custody.Principal {
	p, _ := ctx.Value(principalKey{}).(*custody.Principal)
	return p
}

// Authenticated requires a bearer token naming a principal, puts the
// principal in the request's context (see PrincipalFrom) and applies the
// per-principal rate limit. A missing or unknown token is 401 with
// WWW-Authenticate: Bearer; an exhausted bucket is 429 with Retry-After.
// Wrapping a handler twice authenticates once.
func (s *Server) Authenticated(h http.Handler) http.Handler {
	return s.authenticated(h, s.limiter, false)
}

// authenticated is Authenticated with the bucket of lim (nil: none): the
// write limiter, or the log readers' own (see readLimit). write
// authenticates a request that is one write (custody's
// AuthenticateWrite): its handler serves it with the context returned.
func (s *Server) authenticated(h http.Handler, lim *limiter, write bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if PrincipalFrom(r.Context()) != nil {
			h.ServeHTTP(w, r)
			return
		}
		token, ok := bearer(r.Header.Get("Authorization"))
		if !ok {
			unauthenticated(w, "missing bearer token; send Authorization: Bearer <token> (custody principal add prints one)")
			return
		}
		ctx := r.Context()
		var p *custody.Principal
		var err error
		if write {
			ctx, p, err = s.svc.AuthenticateWrite(ctx, token)
		} else {
			p, err = s.svc.Authenticate(ctx, token)
		}
		if err != nil {
			if errors.Is(err, custody.ErrUnauthenticated) {
				unauthenticated(w, "unknown bearer token")
				return
			}
			s.writeError(w, r, route{}, err)
			return
		}
		if info := infoFrom(r.Context()); info != nil {
			info.principal = p.ID()
		}
		if lim != nil {
			if wait, ok := lim.allow(p.ID()); !ok {
				w.Header().Set("Retry-After", strconv.Itoa(wait))
				writeJSONError(w, http.StatusTooManyRequests, codeRateLimited, rateLimitedReason, "")
				return
			}
		}
		h.ServeHTTP(w, r.WithContext(context.WithValue(ctx, principalKey{}, p)))
	})
}

// bearer extracts the token of an "Authorization: Bearer <token>" header;
// the scheme is case-insensitive. "Token <token>", the scheme Mem0's
// clients send (mem0api), is taken the same way.
func bearer(header string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	token = strings.TrimSpace(token)
	if !ok || !(strings.EqualFold(scheme, "Bearer") || strings.EqualFold(scheme, "Token")) || token == "" {
		return "", false
	}
	return token, true
}

func unauthenticated(w http.ResponseWriter, msg string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="custody"`)
	writeJSONError(w, http.StatusUnauthorized, codeUnauthorized, msg, "")
}

// caller resolves the subject the authenticated principal acts for (design
// section 6: a user acts for itself, an agent names its subject).
func (s *Server) caller(r *http.Request, subject string) (*custody.Caller, error) {
	p := PrincipalFrom(r.Context())
	if p == nil {
		return nil, custody.ErrUnauthenticated
	}
	return s.svc.Act(r.Context(), p, subject)
}

// queryCaller is caller with the subject of ?subject=, for requests
// without a body that could name one.
func (s *Server) queryCaller(r *http.Request) (*custody.Caller, error) {
	return s.caller(r, r.URL.Query().Get("subject"))
}

// recordCaller is queryCaller for a route on one record: the caller first
// (401 and 403 come before anything about the record), then the record id
// of the path.
func (s *Server) recordCaller(r *http.Request) (*custody.Caller, string, error) {
	c, err := s.queryCaller(r)
	if err != nil {
		return nil, "", err
	}
	id, err := pathID(r)
	return c, id, err
}

// callerFor resolves the caller of a request whose body may name the
// subject (body) as well as ?subject=.
func (s *Server) callerFor(r *http.Request, body string) (*custody.Caller, error) {
	sub, err := subjectOf(r, body)
	if err != nil {
		return nil, err
	}
	return s.caller(r, sub)
}

// subjectOf picks the subject of a request that may carry it in its body
// and in ?subject=; naming two different subjects is an error.
func subjectOf(r *http.Request, body string) (string, error) {
	q := r.URL.Query().Get("subject")
	switch {
	case q == "":
		return body, nil
	case body == "" || body == q:
		return q, nil
	}
	return "", badRequest("invalid_input", "subject", "the body and ?subject= name different subjects; give one")
}
