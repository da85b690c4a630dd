package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/custody-mem/custody"
	"github.com/custody-mem/custody/internal/bodybudget"
)

// ErrorBody is the body of every error answer, whatever the route:
// {"error": {"code": "...", "message": "..."}}.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail says what went wrong. Code is stable and machine-readable;
// Message is for people; Field names the offending input, when there is one.
type ErrorDetail struct {
	Code    string `json:"code" doc:"stable, machine-readable error code" example:"not_found"`
	Message string `json:"message" doc:"what was wrong and what to do"`
	Field   string `json:"field,omitempty" doc:"the offending input field, when there is one"`
}

// Error codes beyond the domain's sentinels.
const (
	codeInvalidJSON   = "invalid_json"
	codeUnknownField  = "unknown_field"
	codeBodyTooLarge  = "body_too_large"
	codeRateLimited   = "rate_limited"
	codeServerBusy    = "server_busy"
	codeInternal      = "internal"
	codeTimeout       = "timeout"
	codeUnauthorized  = "unauthenticated"
	defaultNotFound   = "record not found"
	internalMessage   = "internal error; the server logged it"
	timeoutMessage    = "the request took too long; retry later"
	unavailableRetry  = "1"
	rateLimitedReason = "too many requests for this principal; retry after the number of seconds in Retry-After"
)

// apiError is an error that already knows its answer.
type apiError struct {
	status  int
	code    string
	message string
	field   string
	// retryAfter, if set, is the Retry-After of the answer.
	retryAfter string
	// unread is set when the request's body was not read to its end: the
	// connection closes after the answer rather than read the rest.
	unread bool
}

func (e *apiError) Error() string { return e.message }

func badRequest(code, field, msg string) error {
	return &apiError{status: http.StatusBadRequest, code: code, field: field, message: msg}
}

// writeError answers err as JSON. Domain sentinels map to their documented
// statuses; a not-found answer is built from the route's constant message,
// so an absent record and one the caller may not see give the same bytes.
// Anything unexpected is logged and answered 500 without detail.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, rt route, err error) {
	if errors.Is(err, bodybudget.ErrExhausted) { // a handler's read of the body passed the budget (body_budget.go)
		err = errBusy
	}
	var ae *apiError
	if errors.As(err, &ae) {
		if ae.retryAfter != "" {
			w.Header().Set("Retry-After", ae.retryAfter)
		}
		if ae.unread {
			w.Header().Set("Connection", "close")
		}
		writeJSONError(w, ae.status, ae.code, ae.message, ae.field)
		return
	}
	var ce *custody.Error
	field, msg := "", err.Error()
	if errors.As(err, &ce) {
		field, msg = ce.Field, ce.Msg
	}
	switch {
	case errors.Is(err, custody.ErrNotFound):
		writeJSONError(w, http.StatusNotFound, "not_found", rt.notFoundMessage(), "")
	case errors.Is(err, custody.ErrInvalid):
		writeJSONError(w, http.StatusBadRequest, "invalid_input", msg, field)
	case errors.Is(err, custody.ErrUnauthenticated):
		w.Header().Set("WWW-Authenticate", `Bearer realm="custody"`)
		writeJSONError(w, http.StatusUnauthorized, codeUnauthorized, "missing or unknown bearer token; send Authorization: Bearer <token>", "")
	case errors.Is(err, custody.ErrPrincipalUnverified):
		var pm *custody.PrincipalMismatch
		if errors.As(err, &pm) {
			s.log.ErrorContext(r.Context(), "refused a principal whose stored state disagrees with the audit log",
				"principal", pm.Principal, "field", pm.Field, "detail", pm.Detail)
		}
		writeJSONError(w, http.StatusForbidden, "principal_unverified", err.Error(), "")
	case errors.Is(err, custody.ErrSubjectNotAllowed):
		writeJSONError(w, http.StatusForbidden, "subject_not_allowed", msg, "subject")
	case errors.Is(err, custody.ErrForbidden):
		writeJSONError(w, http.StatusForbidden, "forbidden", msg, field)
	case errors.Is(err, custody.ErrConflict):
		writeJSONError(w, http.StatusConflict, "conflict", msg, field)
	case errors.Is(err, custody.ErrUndecidable):
		w.Header().Set("Retry-After", unavailableRetry)
		writeJSONError(w, http.StatusServiceUnavailable, "admission_undecidable", msg, "")
	case errors.Is(err, custody.ErrUnavailable):
		s.log.ErrorContext(r.Context(), "store unavailable", "route", rt.pattern(), "err", err)
		w.Header().Set("Retry-After", unavailableRetry)
		writeJSONError(w, http.StatusServiceUnavailable, "unavailable", "the store is unavailable; retry later", "")
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		s.log.WarnContext(r.Context(), "request ended early", "route", rt.pattern(), "err", err)
		w.Header().Set("Retry-After", unavailableRetry)
		writeJSONError(w, http.StatusServiceUnavailable, codeTimeout, timeoutMessage, "")
	default:
		s.log.ErrorContext(r.Context(), "internal error", "route", rt.pattern(), "method", r.Method, "err", err)
		writeJSONError(w, http.StatusInternalServerError, codeInternal, internalMessage, "")
	}
}

// WriteError answers err as every route of the API does (its status and
// JSON error body): for handlers mounted with Mount.
func (s *Server) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	s.writeError(w, r, route{}, err)
}

// writeJSONError writes the error body with status.
func writeJSONError(w http.ResponseWriter, status int, code, message, field string) {
	writeJSON(w, status, ErrorBody{Error: ErrorDetail{Code: code, Message: message, Field: field}})
}

// writeJSON writes v as the JSON answer with status. Answers are private to
// the caller and never cached.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b, _ = json.Marshal(ErrorBody{Error: ErrorDetail{Code: codeInternal, Message: internalMessage}})
	}
	writeJSONBytes(w, status, b)
}

// writeJSONBytes writes b, a JSON document, as writeJSON writes the answer.
func writeJSONBytes(w http.ResponseWriter, status int, b []byte) {
	b = append(b, '\n')
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(b)
}
