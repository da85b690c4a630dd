package mcpserver

import (
	"context"
	"errors"
	"fmt"

	custody "github.com/custody-mem/custody"
)

// NotFoundMessage is the one answer for a memory that does not exist and one
// the session may not see (design rule 4): nothing in it depends on which.
const NotFoundMessage = "not found: no memory with that id is visible to you"

// toolError turns a domain error into the error of a tool result (IsError),
// whose text the model reads. The sentinels map as errors.go of the domain
// documents; anything else is logged and reported without detail.
func (ss *session) toolError(ctx context.Context, tool string, err error) error {
	var ce *custody.Error
	msg := err.Error()
	if errors.As(err, &ce) {
		msg = ce.Msg
	}
	switch {
	case errors.Is(err, custody.ErrNotFound):
		return errors.New(NotFoundMessage)
	case errors.Is(err, custody.ErrInvalid):
		return fmt.Errorf("invalid input: %s", msg)
	case errors.Is(err, custody.ErrSubjectNotAllowed), errors.Is(err, custody.ErrForbidden):
		return fmt.Errorf("forbidden: %s", msg)
	case errors.Is(err, custody.ErrConflict):
		return fmt.Errorf("conflict: %s", msg)
	case errors.Is(err, custody.ErrUndecidable):
		return fmt.Errorf("admission undecidable right now; the candidate is kept as pending: %s", msg)
	case errors.Is(err, custody.ErrUnavailable):
		ss.srv.log.ErrorContext(ctx, "mcp: store unavailable", "tool", tool, "err", err)
		return errors.New("the memory store is unavailable; retry later")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return errors.New("the call was cancelled or took too long; retry later")
	}
	ss.srv.log.ErrorContext(ctx, "mcp: internal error", "tool", tool, "session", ss.id, "err", err)
	return errors.New("internal error; the server logged it")
}
