// Package gateway connects custody to the MCP servers a model's other tools
// live on (its upstreams), so that custody stands between the model and
// them: it lists their tools, forwards calls and bounds what comes back.
//
// The package is the client side only: it starts stdio upstreams and
// supervises them (an upstream that exits is reported and started again on
// the next call), connects to streamable HTTP upstreams with the configured
// headers, lists each upstream's tools as <upstream>_<tool>, and turns every
// failure of an upstream (exit, timeout, malformed or oversized result) into
// an *Error the caller shows as a tool error. What custody does at the
// boundary, recording each result as an observation of the session and
// asking the gate before each call, is mcpserver's (mcpserver/gateway.go).
package gateway

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options configure a Gateway. The zero value of each field means its default.
type Options struct {
	// Logger receives upstream exits, restarts and skipped tools. Default
	// slog.Default().
	Logger *slog.Logger
	// Stderr receives the standard error of stdio upstreams. Default
	// os.Stderr.
	Stderr io.Writer
	// HTTPClient is the base client of URL upstreams. Default
	// http.DefaultClient's transport.
	HTTPClient *http.Client
	// Reserved names tools the upstreams' tools may not be listed as (the
	// server's own); a collision refuses to start.
	Reserved []string
	// Version is the client version in the MCP handshake.
	Version string
}

// Tool is one upstream tool as the gateway lists it.
type Tool struct {
	// Name is what the model calls: <upstream>_<tool>.
	Name string
	// Upstream and Channel name the upstream and the channel its results
	// arrive on.
	Upstream, Channel string
	// Action is the policy action a call is gated as: the upstream's
	// "actions" mapping of the tool, else <upstream>.<tool>.
	Action string
	// Remote is the tool as the upstream listed it.
	Remote *mcp.Tool
}

// Listed is the tool as the model sees it: the upstream's title,
// description, schemas and annotations under the gateway's name.
func (t Tool) Listed() *mcp.Tool {
	c := *t.Remote
	c.Name = t.Name
	c.Meta = nil
	return &c
}

// Error is an upstream failure, worded for the model and the user.
type Error struct {
	Upstream, Tool string
	Msg            string
	Err            error
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Err }

// Gateway is a set of connected upstreams. It owns their processes and
// sessions; Close ends them.
type Gateway struct {
	cfg    *Config
	opts   Options
	ups    map[string]*upstream
	tools  []Tool
	byName map[string]int
}

var validToolName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// Start connects every upstream of cfg and lists their tools. It fails,
// closing what it started, when an upstream cannot be started or listed,
// or when a listed name collides with Options.Reserved.
func Start(ctx context.Context, cfg *Config, opts Options) (*Gateway, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Stderr == nil {
		opts.Stderr = os.Stderr
	}
	if opts.Version == "" {
		opts.Version = "(devel)"
	}
	g := &Gateway{cfg: cfg, opts: opts, ups: map[string]*upstream{}, byName: map[string]int{}}
	for i := range cfg.Upstreams {
		uc := &cfg.Upstreams[i]
		u := newUpstream(g, uc)
		g.ups[uc.Name] = u
		if err := g.list(ctx, u); err != nil {
			g.Close()
			return nil, err
		}
	}
	sort.Slice(g.tools, func(i, j int) bool { return g.tools[i].Name < g.tools[j].Name })
	for i, t := range g.tools {
		g.byName[t.Name] = i
	}
	for _, up := range g.Upstreams() {
		_, digest, reviewed := g.Listing(up)
		if reviewed {
			opts.Logger.Info("gateway: the upstream's tool descriptions are the reviewed ones", "upstream", up, "digest", digest)
		} else {
			opts.Logger.Info("gateway: the upstream's tool descriptions count as content from its channel in every session that lists them; pin this digest as reviewed_descriptions once you have read them", "upstream", up, "digest", digest)
		}
	}
	return g, nil
}

// list connects u and adds its tools.
func (g *Gateway) list(ctx context.Context, u *upstream) error {
	lctx, cancel := context.WithTimeout(ctx, max(u.timeout, DefaultStartTimeout))
	defer cancel()
	cs, err := u.session(lctx)
	if err != nil {
		return fmt.Errorf("upstream %q: %w", u.cfg.Name, err)
	}
	for t, err := range cs.Tools(lctx, nil) {
		if err != nil {
			return fmt.Errorf("upstream %q: listing its tools: %w", u.cfg.Name, err)
		}
		name := u.cfg.Name + "_" + t.Name
		switch {
		case !validToolName.MatchString(name):
			g.opts.Logger.Warn("gateway: skipping an upstream tool whose name is not a valid MCP tool name", "upstream", u.cfg.Name, "tool", t.Name)
			continue
		case !objectSchema(t.InputSchema):
			g.opts.Logger.Warn("gateway: skipping an upstream tool whose input schema is not of type object", "upstream", u.cfg.Name, "tool", t.Name)
			continue
		}
		if err := listable(name, t); err != nil {
			g.opts.Logger.Warn("gateway: skipping an upstream tool that cannot be listed", "upstream", u.cfg.Name, "tool", t.Name, "err", err)
			continue
		}
		for _, r := range g.opts.Reserved {
			if r == name {
				return fmt.Errorf("upstream %q lists tool %q, which would be listed as %s, the name of one of custody's own tools: rename the upstream in the gateway file", u.cfg.Name, t.Name, name)
			}
		}
		for _, have := range g.tools {
			if have.Name == name {
				return fmt.Errorf("upstream %q lists tool %q twice", u.cfg.Name, t.Name)
			}
		}
		action := u.cfg.Actions[t.Name]
		if action == "" {
			action = u.cfg.Name + "." + t.Name
		}
		g.tools = append(g.tools, Tool{Name: name, Upstream: u.cfg.Name, Channel: u.cfg.Channel, Action: action, Remote: t})
	}
	for tool := range u.cfg.Actions {
		if !g.has(u.cfg.Name + "_" + tool) {
			g.opts.Logger.Warn("gateway: the actions of an upstream map a tool it does not list", "upstream", u.cfg.Name, "tool", tool)
		}
	}
	return nil
}

func (g *Gateway) has(name string) bool {
	for _, t := range g.tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// listable reports why an MCP server would refuse to list t as name (the
// SDK panics on what it refuses), so that one odd upstream tool is skipped
// instead of failing every session.
func listable(name string, t *mcp.Tool) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	c := *t
	c.Name = name
	mcp.NewServer(&mcp.Implementation{Name: "probe"}, nil).AddTool(&c, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, nil
	})
	return nil
}

func objectSchema(s any) bool {
	b, err := json.Marshal(s)
	if err != nil {
		return false
	}
	var m map[string]any
	return json.Unmarshal(b, &m) == nil && m["type"] == "object"
}

// Listing is what a model reads of an upstream's tools when its client
// lists them (each Tool.Text, in name order) and the SHA-256 of it in hex;
// reviewed reports whether the gateway file pins that digest
// (Upstream.ReviewedDescriptions).
func (g *Gateway) Listing(upstream string) (texts []string, digest string, reviewed bool) {
	h := sha256.New()
	for _, t := range g.tools {
		if t.Upstream == upstream {
			text := t.Text()
			texts = append(texts, text)
			h.Write([]byte(text + "\x00"))
		}
	}
	digest = hex.EncodeToString(h.Sum(nil))
	u := g.ups[upstream]
	return texts, digest, u != nil && u.cfg.ReviewedDescriptions == digest
}

// Upstreams lists the names of the upstreams, sorted.
func (g *Gateway) Upstreams() []string { return slices.Sorted(maps.Keys(g.ups)) }

// Channel is the channel of an upstream's results.
func (g *Gateway) Channel(upstream string) string {
	if u := g.ups[upstream]; u != nil {
		return u.cfg.Channel
	}
	return ""
}

// Tools lists the upstream tools, sorted by name.
func (g *Gateway) Tools() []Tool { return append([]Tool(nil), g.tools...) }

// Tool returns the tool listed as name.
func (g *Gateway) Tool(name string) (Tool, bool) {
	i, ok := g.byName[name]
	if !ok {
		return Tool{}, false
	}
	return g.tools[i], true
}

// Channels lists the channels of the upstreams, each once.
func (g *Gateway) Channels() map[string][]string {
	m := map[string][]string{}
	for _, u := range g.cfg.Upstreams {
		m[u.Channel] = append(m[u.Channel], u.Name)
	}
	return m
}

// Call forwards a call of the tool listed as name with its arguments (a
// JSON object) and returns the upstream's result, which may itself be a
// tool error. Every failure of the upstream is an *Error.
func (g *Gateway) Call(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	t, ok := g.Tool(name)
	if !ok {
		return nil, fmt.Errorf("no upstream tool %q", name)
	}
	u := g.ups[t.Upstream]
	fail := func(err error, format string, a ...any) error {
		return &Error{Upstream: t.Upstream, Tool: t.Remote.Name, Msg: fmt.Sprintf(format, a...), Err: err}
	}
	cctx, cancel := context.WithTimeout(ctx, u.timeout)
	defer cancel()
	cs, err := u.session(cctx)
	if err != nil {
		return nil, fail(err, "upstream %s is not running (%v); nothing was sent. custody starts it again on the next call", t.Upstream, err)
	}
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	u.over.Store(false)
	res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: t.Remote.Name, Arguments: args})
	switch {
	case err == nil:
	case u.over.Load():
		u.lost(cs, mcp.ErrConnectionClosed)
		return nil, fail(err, "upstream %s answered %s with more than %d bytes, more than the gateway reads; none of it is shown and the connection was closed. Ask for less (a narrower query, a page, a smaller file)",
			t.Upstream, t.Remote.Name, messageLimit(g.cfg))
	case ctx.Err() != nil:
		return nil, fail(err, "the call of %s was cancelled", name)
	case cctx.Err() != nil:
		return nil, fail(err, "upstream %s did not answer %s within %s; the call was abandoned and may or may not have taken effect upstream", t.Upstream, t.Remote.Name, u.timeout)
	case u.lost(cs, err):
		return nil, fail(err, "upstream %s stopped during the call of %s (%v); the call may or may not have taken effect upstream. custody starts it again on the next call", t.Upstream, t.Remote.Name, err)
	default:
		return nil, fail(err, "upstream %s failed the call of %s: %v", t.Upstream, t.Remote.Name, err)
	}
	if res == nil {
		return nil, fail(nil, "upstream %s returned no result for %s", t.Upstream, t.Remote.Name)
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, fail(err, "upstream %s returned a result for %s that cannot be encoded: %v", t.Upstream, t.Remote.Name, err)
	}
	if max := g.cfg.maxResult(); len(b) > max || len(Text(res)) > max {
		return nil, fail(nil, "upstream %s returned %d bytes for %s, more than the gateway's limit of %d bytes; none of it is shown. Ask for less (a narrower query, a page, a smaller file)",
			t.Upstream, len(b), t.Remote.Name, max)
	}
	return res, nil
}

// Text is what a result puts in the model's context, as text: its text
// content, the text of embedded resources, the links it names and its
// structured content rendered as text (Rendered: one "path: value" line
// per value, strings as they are, never JSON-escaped, so that an address
// written "Name <addr>" reads as such). It is what custody records as
// observed, and what the gate compares argument values with.
func Text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.EmbeddedResource:
			if c.Resource != nil {
				parts = append(parts, c.Resource.URI, c.Resource.Text)
			}
		case *mcp.ResourceLink:
			parts = append(parts, c.URI, c.Name, c.Title, c.Description)
		case *mcp.ImageContent:
			parts = append(parts, "[image "+c.MIMEType+"]")
		case *mcp.AudioContent:
			parts = append(parts, "[audio "+c.MIMEType+"]")
		}
	}
	if res.StructuredContent != nil {
		parts = append(parts, Rendered(res.StructuredContent))
	}
	return strings.Join(slices.DeleteFunc(parts, func(p string) bool { return p == "" }), "\n")
}

// Rendered is a JSON value as text a reader (or the gate) reads it: one
// line per string, number or boolean, "path: value", with the path of
// object keys and list indexes that leads to it, in key order.
func Rendered(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	var tree any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if d.Decode(&tree) != nil {
		return ""
	}
	var lines []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch t := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(t)) {
				walk(joinPath(path, k), t[k])
			}
		case []any:
			for i, e := range t {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		case nil:
		default:
			if path == "" {
				lines = append(lines, fmt.Sprint(t))
			} else {
				lines = append(lines, path+": "+fmt.Sprint(t))
			}
		}
	}
	walk("", tree)
	return strings.Join(lines, "\n")
}

func joinPath(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// Text is what a model reads of the tool when its client lists it: its
// name, title and description, and the titles and descriptions its input
// and output schemas hold. custody records it as an observation of the
// session, on the upstream's channel, as soon as the session lists the
// tools or calls one: a description is content the model reads, and may
// carry instructions or values like any result.
func (t Tool) Text() string {
	r := t.Remote
	parts := []string{"tool " + t.Name, r.Title, r.Description}
	if r.Annotations != nil {
		parts = append(parts, r.Annotations.Title)
	}
	for _, sch := range []any{r.InputSchema, r.OutputSchema} {
		if sch != nil {
			parts = append(parts, schemaText(sch))
		}
	}
	return strings.Join(slices.DeleteFunc(parts, func(p string) bool { return p == "" }), "\n")
}

// schemaText is the text a JSON schema shows a reader: every title,
// description, default, example and enumerated value, rendered.
func schemaText(sch any) string {
	b, err := json.Marshal(sch)
	if err != nil {
		return ""
	}
	var tree any
	if json.Unmarshal(b, &tree) != nil {
		return ""
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(t)) {
				switch k {
				case "title", "description", "default", "examples", "enum", "const":
					if r := Rendered(t[k]); r != "" {
						out = append(out, r)
					}
				case "properties":
					if props, ok := t[k].(map[string]any); ok {
						out = append(out, strings.Join(slices.Sorted(maps.Keys(props)), " "))
					}
				}
				walk(t[k])
			}
		case []any:
			for _, e := range t {
				walk(e)
			}
		}
	}
	walk(tree)
	return strings.Join(out, "\n")
}

// Close ends every upstream session and stops the stdio upstreams.
func (g *Gateway) Close() error {
	var errs []error
	for _, u := range g.ups {
		errs = append(errs, u.close())
	}
	return errors.Join(errs...)
}
