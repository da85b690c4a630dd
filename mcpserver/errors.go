package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/custody-mem/custody/internal/jsontext"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	custody "github.com/custody-mem/custody"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
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
	case errors.Is(err, custody.ErrUnauthenticated):
		// The credential this session runs on stopped working (revoked or
		// rotated): the backend's message says which and what to do.
		return fmt.Errorf("unauthenticated: %s", msg)
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

// plainArguments checks a tools/call's arguments against its tool's input
// schema before the SDK does, and fails it with a message a model can act
// on ("invalid input: limit must be at most 100 (got 500)") instead of the
// validator's text. Arguments it finds no fault with go on to the SDK's own
// validation unchanged.
func (ts toolSchemas) plainArguments(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		call, ok := req.(*mcp.CallToolRequest)
		if !ok || method != "tools/call" || call.Params == nil {
			return next(ctx, method, req)
		}
		schema := ts.byName(call.Params.Name)
		if schema == nil {
			return next(ctx, method, req)
		}
		// The arguments are the raw bytes the client sent, so this holds on
		// every transport (stdio included), not only where /mcp checks the body.
		if field, problem := jsontext.Check(call.Params.Arguments); problem != "" {
			return toolFailure(fmt.Sprintf("invalid input: %s %s; send the text as valid UTF-8. Nothing was done.", orWord(field, "the arguments"), problem)), nil
		}
		args := map[string]json.RawMessage{}
		if len(call.Params.Arguments) > 0 && string(call.Params.Arguments) != "null" {
			if err := json.Unmarshal(call.Params.Arguments, &args); err != nil {
				return toolFailure(fmt.Sprintf("invalid input: the arguments of %s must be a JSON object. Nothing was done.", call.Params.Name)), nil
			}
		}
		if msg := argumentProblem(schema, args); msg != "" {
			return toolFailure("invalid input: " + msg + ". Nothing was done."), nil
		}
		return next(ctx, method, req)
	}
}

// byName is the input schema of a tool, or nil.
func (ts toolSchemas) byName(tool string) *jsonschema.Schema {
	switch tool {
	case ToolSearch:
		return ts.search
	case ToolGet, ToolHistory:
		return ts.get
	case ToolRemember:
		return ts.remember
	case ToolGate:
		return ts.gate
	}
	return nil
}

func orWord(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func toolFailure(msg string) *mcp.CallToolResult {
	res := &mcp.CallToolResult{}
	res.SetError(errors.New(msg))
	return res
}

// argumentProblem says, in words, the first way args break schema (a flat
// object schema, as every tool's is), or "".
func argumentProblem(schema *jsonschema.Schema, args map[string]json.RawMessage) string {
	for _, name := range schema.Required {
		if _, ok := args[name]; !ok {
			return fmt.Sprintf("%s is required: %s", name, describe(schema.Properties[name]))
		}
	}
	for _, name := range propertyNames(schema) {
		raw, ok := args[name]
		if !ok {
			continue
		}
		if msg := valueProblem(name, schema.Properties[name], raw); msg != "" {
			return msg
		}
	}
	return ""
}

// describe is a property's description, or its name when it has none.
func describe(p *jsonschema.Schema) string {
	if p == nil || p.Description == "" {
		return "see the tool's input schema"
	}
	return p.Description
}

// valueProblem checks one argument against its property schema.
func valueProblem(name string, p *jsonschema.Schema, raw json.RawMessage) string {
	if p == nil {
		return ""
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return fmt.Sprintf("%s is not valid JSON", name)
	}
	types := p.Types
	if p.Type != "" {
		types = []string{p.Type}
	}
	if len(types) > 0 && !slices.ContainsFunc(types, func(t string) bool { return isType(v, t) }) {
		return fmt.Sprintf("%s must be %s, not %s", name, kindList(types), jsonKind(v))
	}
	switch x := v.(type) {
	case json.Number:
		f, _ := x.Float64()
		if p.Minimum != nil && f < *p.Minimum {
			return fmt.Sprintf("%s must be at least %s (got %s)", name, number(*p.Minimum), x)
		}
		if p.Maximum != nil && f > *p.Maximum {
			return fmt.Sprintf("%s must be at most %s (got %s)", name, number(*p.Maximum), x)
		}
	case string:
		if p.MinLength != nil && utf8.RuneCountInString(x) < *p.MinLength {
			if *p.MinLength == 1 {
				return fmt.Sprintf("%s must not be empty", name)
			}
			return fmt.Sprintf("%s must be at least %d characters", name, *p.MinLength)
		}
		if p.Format == "date-time" {
			if _, err := time.Parse(time.RFC3339, x); err != nil {
				return fmt.Sprintf("%s must be an RFC 3339 time such as 2027-01-31T00:00:00Z, not %q", name, x)
			}
		}
	case []any:
		if p.Items != nil && p.Items.Type != "" {
			for i, item := range x {
				if !isType(item, p.Items.Type) {
					return fmt.Sprintf("%s[%d] must be %s, not %s", name, i, kindList([]string{p.Items.Type}), jsonKind(item))
				}
			}
		}
	}
	if len(p.Enum) > 0 && !slices.Contains(p.Enum, v) {
		opts := make([]string, len(p.Enum))
		for i, e := range p.Enum {
			opts[i] = fmt.Sprint(e)
		}
		return fmt.Sprintf("%s must be one of %s, not %s", name, strings.Join(opts, ", "), raw)
	}
	return ""
}

// isType reports whether a decoded JSON value v is of JSON schema type t.
func isType(v any, t string) bool {
	switch t {
	case "string":
		_, ok := v.(string)
		return ok
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		f, err := n.Float64()
		return err == nil && f == math.Trunc(f)
	case "number":
		_, ok := v.(json.Number)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "null":
		return v == nil
	}
	return true
}

// kindList names schema types the way a reader thinks of them.
func kindList(types []string) string {
	names := make([]string, 0, len(types))
	for _, t := range types {
		switch t {
		case "integer":
			names = append(names, "a whole number")
		case "array":
			names = append(names, "a list")
		case "null":
			names = append(names, "null")
		case "object":
			names = append(names, "an object")
		default:
			names = append(names, "a "+t)
		}
	}
	return strings.Join(names, " or ")
}

// jsonKind names the JSON kind of a decoded value.
func jsonKind(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "the number " + x.String()
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// number formats a schema bound without a needless fraction.
func number(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
