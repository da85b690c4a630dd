package memgraph

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/custody-mem/custody/internal/jsontext"
)

// The reference server validates a tool's arguments with zod, through the
// TypeScript MCP SDK, and answers a tool error whose text lists every
// problem, one line each: "Invalid input: expected string, received
// number at entities[0].name". Arguments the schema does not name are
// ignored. This file checks the same shapes the same way, so that a
// caller sees the same words.

// shape is a zod schema of the reference: an object of named fields (in
// the reference's order), an array of items, or a string.
type shape struct {
	kind   string // "object", "array", "string"
	fields []field
	items  *shape
}

type field struct {
	name string
	s    *shape
}

var str = &shape{kind: "string"}

func arrayOf(s *shape) *shape { return &shape{kind: "array", items: s} }

func object(fs ...field) *shape { return &shape{kind: "object", fields: fs} }

var (
	entityShape   = object(field{"name", str}, field{"entityType", str}, field{"observations", arrayOf(str)})
	relationShape = object(field{"from", str}, field{"to", str}, field{"relationType", str})
	inputShapes   = map[string]*shape{
		"create_entities":     object(field{"entities", arrayOf(entityShape)}),
		"create_relations":    object(field{"relations", arrayOf(relationShape)}),
		"add_observations":    object(field{"observations", arrayOf(object(field{"entityName", str}, field{"contents", arrayOf(str)}))}),
		"delete_entities":     object(field{"entityNames", arrayOf(str)}),
		"delete_observations": object(field{"deletions", arrayOf(object(field{"entityName", str}, field{"observations", arrayOf(str)}))}),
		"delete_relations":    object(field{"relations", arrayOf(relationShape)}),
		"read_graph":          object(),
		"search_nodes":        object(field{"query", str}),
		"open_nodes":          object(field{"names", arrayOf(str)}),
	}
)

// undefined stands for a field that is absent.
type undefinedT struct{}

var undefined = undefinedT{}

// received is zod's name for the type of a JSON value.
func received(v any) string {
	switch v.(type) {
	case undefinedT:
		return "undefined"
	case nil:
		return "null"
	case string:
		return "string"
	case json.Number, float64:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "array"
	}
	return "object"
}

// check returns the problems of v against s, in zod's order and words.
func (s *shape) check(v any, path []any, out []string) []string {
	if got := received(v); got != s.kind {
		return append(out, issue(fmt.Sprintf("Invalid input: expected %s, received %s", s.kind, got), path))
	}
	switch s.kind {
	case "object":
		m := v.(map[string]any)
		for _, f := range s.fields {
			fv, ok := m[f.name]
			if !ok {
				fv = undefined
			}
			out = f.s.check(fv, append(path[:len(path):len(path)], f.name), out)
		}
	case "array":
		for i, x := range v.([]any) {
			out = s.items.check(x, append(path[:len(path):len(path)], i), out)
		}
	}
	return out
}

// issue words one problem as the SDK does: the message, then " at " and
// the path (entities[0].name) unless the problem is the whole input.
func issue(msg string, path []any) string {
	if len(path) == 0 {
		return msg
	}
	var b strings.Builder
	for i, p := range path {
		switch p := p.(type) {
		case int:
			b.WriteString("[" + strconv.Itoa(p) + "]")
		case string:
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(p)
		}
	}
	return msg + " at " + b.String()
}

// checkArgs decodes a tool's raw arguments into v after checking them as
// the reference does; the error is the reference's tool error text.
func checkArgs(tool string, raw json.RawMessage, v any) error {
	var args any = map[string]any{}
	if len(bytes.TrimSpace(raw)) > 0 && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&args); err != nil {
			return fmt.Errorf("MCP error -32602: Input validation error: Invalid arguments for tool %s: %v", tool, err)
		}
	}
	if problems := inputShapes[tool].check(args, nil, nil); len(problems) > 0 {
		return fmt.Errorf("MCP error -32602: Input validation error: Invalid arguments for tool %s: %s", tool, strings.Join(problems, "\n"))
	}
	// encoding/json would turn a lone surrogate into U+FFFD: custody keeps
	// exactly what was sent, or nothing (a difference from the reference,
	// which keeps it).
	if where, problem := jsontext.Check(raw); problem != "" {
		return fmt.Errorf("invalid input: %s %s; send text as UTF-8. Nothing was written", strings.TrimPrefix(where+" ", " "), problem)
	}
	b, err := json.Marshal(args)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
