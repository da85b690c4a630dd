package custody

import (
	"errors"
	"fmt"
)

// Sentinel errors. Transports map them to status codes; each comment names
// the HTTP status and the MCP behaviour.
var (
	// ErrNotFound: 404 not_found; MCP tool error "not found". Also returned for
	// records the caller may not see, so the two are indistinguishable.
	ErrNotFound = errors.New("not found")
	// ErrInvalid: 400 invalid_input; MCP tool error with the message.
	ErrInvalid = errors.New("invalid input")
	// ErrUnauthenticated: 401 unauthenticated; MCP transport refuses the session.
	ErrUnauthenticated = errors.New("missing or unknown token")
	// ErrForbidden: 403 forbidden (a channel or role the principal does not hold).
	ErrForbidden = errors.New("forbidden")
	// ErrSubjectNotAllowed: 403 subject_not_allowed.
	ErrSubjectNotAllowed = errors.New("subject not allowed")
	// ErrConflict: 409 conflict (e.g. confirming a record that is not pending).
	ErrConflict = errors.New("conflict")
	// ErrUndecidable: 503 admission_undecidable; the candidate is kept as pending.
	ErrUndecidable = errors.New("admission undecidable")
	// ErrPrincipalUnverified: 403 principal_unverified; MCP transport
	// refuses the session. The principal's stored rights, token hash or
	// keys disagree with its latest log entry: the row was edited outside
	// custody, and the server does not act for it until an operator runs
	// custody verify and puts the row back.
	ErrPrincipalUnverified = errors.New("principal disagrees with the log")
	// ErrUnavailable: 503 unavailable; the store cannot be reached.
	ErrUnavailable = errors.New("store unavailable")
)

// Error is a typed error carrying the field or operation at fault and a hint
// for the user. It wraps one of the sentinels.
type Error struct {
	Kind  error  // one of the sentinels
	Field string // the offending input field, if any
	Msg   string // what was wrong and what to do
}

func (e *Error) Error() string { return e.Msg }

// Unwrap lets errors.Is match the sentinel.
func (e *Error) Unwrap() error { return e.Kind }

func invalid(field, format string, args ...any) error {
	return &Error{Kind: ErrInvalid, Field: field, Msg: fmt.Sprintf(format, args...)}
}

func forbidden(format string, args ...any) error {
	return &Error{Kind: ErrForbidden, Msg: fmt.Sprintf(format, args...)}
}

func conflict(format string, args ...any) error {
	return &Error{Kind: ErrConflict, Msg: fmt.Sprintf(format, args...)}
}

// notFound is the one body for "absent" and "not yours": what is named is the
// kind of thing, never whether it exists.
func notFound(what string) error {
	return &Error{Kind: ErrNotFound, Msg: fmt.Sprintf("%s not found", what)}
}
