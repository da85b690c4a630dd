package memgraph

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	custody "github.com/custody-mem/custody"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultNamespace is the root namespace of the graph's records.
const DefaultNamespace = "graph"

// ResourceURI is the reference server's resource: the whole graph as JSON.
const ResourceURI = "memory://knowledge-graph"

// toolsJSON is what the reference server (@modelcontextprotocol/server-memory
// 2026.8.31, pinned in testdata/node) answers to tools/list, but for each
// tool's "execution" field, which the Go MCP SDK has no place for. The
// differential test in testdata/node compares it with the live reference.
//
//go:embed tools.json
var toolsJSON []byte

// Tools are the reference's nine tools, as it lists them (their schemas
// kept as the reference wrote them, key order included).
func Tools() []*mcp.Tool {
	var raws []json.RawMessage
	if err := json.Unmarshal(toolsJSON, &raws); err != nil {
		panic(fmt.Sprintf("memgraph: tools.json: %v", err))
	}
	ts := make([]*mcp.Tool, len(raws))
	for i, raw := range raws {
		var t mcp.Tool
		var schemas struct{ InputSchema, OutputSchema json.RawMessage }
		if err := errors.Join(json.Unmarshal(raw, &t), json.Unmarshal(raw, &schemas)); err != nil {
			panic(fmt.Sprintf("memgraph: tools.json: %v", err))
		}
		t.InputSchema, t.OutputSchema = schemas.InputSchema, schemas.OutputSchema
		ts[i] = &t
	}
	return ts
}

// The tools' inputs, as the reference server declares them.
type (
	entitiesInput struct {
		Entities []Entity `json:"entities"`
	}
	relationsInput struct {
		Relations []Relation `json:"relations"`
	}
	observationsInput struct {
		Observations []ObservationInput `json:"observations"`
	}
	entityNamesInput struct {
		EntityNames []string `json:"entityNames"`
	}
	deletionsInput struct {
		Deletions []Deletion `json:"deletions"`
	}
	queryInput struct {
		Query string `json:"query"`
	}
	namesInput struct {
		Names []string `json:"names"`
	}
)

// The tools' structured outputs.
type (
	resultsOutput struct {
		Results []ObservationResult `json:"results"`
	}
	successOutput struct {
		Success bool   `json:"success"`
		Message string `json:"message"`
	}
)

// NewServer returns the MCP server of graph g, whose records are written in
// custody session (named in its instructions for a harness). It answers as
// the reference server does (docs/mcp.md lists the differences): the same
// tools, schemas, results, errors and resource.
func NewServer(g *Graph, version string) *mcp.Server {
	// The SDK keeps who subscribed to the resource; a tool that may have
	// changed the graph tells them (notifications/resources/updated), as the
	// reference does.
	accept := func(context.Context, *mcp.SubscribeRequest) error { return nil }
	leave := func(context.Context, *mcp.UnsubscribeRequest) error { return nil }
	srv := mcp.NewServer(&mcp.Implementation{Name: "custody-memory-graph", Title: "custody knowledge graph memory", Version: version},
		&mcp.ServerOptions{
			Instructions: "A knowledge graph memory kept by custody: every entity, observation and relation is a memory " +
				"with provenance, admitted by custody's policy; what it holds for review is not part of the graph until approved. " +
				"custody session: " + g.session,
			Capabilities:       &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}, Resources: &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true}},
			SubscribeHandler:   accept,
			UnsubscribeHandler: leave,
		})
	t := &tools{g: g, srv: srv}
	for _, tool := range Tools() {
		srv.AddTool(tool, t.handler(tool.Name))
	}
	srv.AddResource(&mcp.Resource{Name: "knowledge-graph", Title: "Knowledge Graph", URI: ResourceURI,
		Description: "The full knowledge graph with all entities and relations", MIMEType: "application/json"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			kg, err := g.ReadGraph(ctx)
			if err != nil {
				return nil, toolErr(err)
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: jsText(kg)}}}, nil
		})
	srv.AddReceivingMiddleware(unknownTool)
	return srv
}

// unknownTool answers a call of a tool the server does not have as the
// reference does: a tool error, not a protocol error.
func unknownTool(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "tools/call" {
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && inputShapes[p.Name] == nil {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "MCP error -32602: Tool " + p.Name + " not found"}}}, nil
			}
		}
		return next(ctx, method, req)
	}
}

type tools struct {
	g   *Graph
	srv *mcp.Server
}

// handler is one tool: its arguments checked and decoded as the
// reference's, its answer the reference's, and what admission held said.
func (t *tools) handler(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, changed, err := t.call(ctx, req, name)
		if err != nil {
			return errorResult(err.Error()), nil
		}
		if changed {
			_ = t.srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: ResourceURI}) // a lost notice loses no data
		}
		return res, nil
	}
}

func (t *tools) call(ctx context.Context, req *mcp.CallToolRequest, name string) (*mcp.CallToolResult, bool, error) {
	g, raw := t.g, req.Params.Arguments
	switch name {
	case "create_entities":
		var in entitiesInput
		if err := checkArgs(name, raw, &in); err != nil {
			return nil, false, err
		}
		out, held, err := g.CreateEntities(ctx, in.Entities)
		return answer(out, entitiesInput{Entities: out}, held), true, toolErr(err)
	case "create_relations":
		var in relationsInput
		if err := checkArgs(name, raw, &in); err != nil {
			return nil, false, err
		}
		out, held, err := g.CreateRelations(ctx, in.Relations)
		return answer(out, relationsInput{Relations: out}, held), true, toolErr(err)
	case "add_observations":
		var in observationsInput
		if err := checkArgs(name, raw, &in); err != nil {
			return nil, false, err
		}
		out, held, err := g.AddObservations(ctx, in.Observations)
		return answer(out, resultsOutput{Results: out}, held), true, toolErr(err)
	case "delete_entities":
		var in entityNamesInput
		if err := checkArgs(name, raw, &in); err != nil {
			return nil, false, err
		}
		held, err := g.DeleteEntities(ctx, in.EntityNames)
		return t.deleted(ctx, req, "Entities deleted successfully", held, err)
	case "delete_observations":
		var in deletionsInput
		if err := checkArgs(name, raw, &in); err != nil {
			return nil, false, err
		}
		held, err := g.DeleteObservations(ctx, in.Deletions)
		return t.deleted(ctx, req, "Observations deleted successfully", held, err)
	case "delete_relations":
		var in relationsInput
		if err := checkArgs(name, raw, &in); err != nil {
			return nil, false, err
		}
		held, err := g.DeleteRelations(ctx, in.Relations)
		return t.deleted(ctx, req, "Relations deleted successfully", held, err)
	}
	var (
		kg  KnowledgeGraph
		err error
	)
	switch name {
	case "read_graph":
		var in struct{}
		if err := checkArgs(name, raw, &in); err != nil {
			return nil, false, err
		}
		kg, err = g.ReadGraph(ctx)
	case "search_nodes":
		var in queryInput
		if err := checkArgs(name, raw, &in); err != nil {
			return nil, false, err
		}
		kg, err = g.SearchNodes(ctx, in.Query)
	case "open_nodes":
		var in namesInput
		if err := checkArgs(name, raw, &in); err != nil {
			return nil, false, err
		}
		kg, err = g.OpenNodes(ctx, in.Names)
	}
	if err != nil {
		return nil, false, toolErr(err)
	}
	return answer(kg, kg, nil), false, nil
}

func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// answer is a tool's result as the reference gives it: the value as
// JSON.stringify(v, null, 2) writes it, and the structured content; then
// what admission held, if anything.
func answer(v, structured any, held []Held) *mcp.CallToolResult {
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: jsText(v)}}, StructuredContent: structured}
	if len(held) > 0 {
		res.Content = append(res.Content, &mcp.TextContent{Text: "custody did not admit these writes; they are not part of the graph " +
			"until a reviewer approves them or the owner confirms them:\n" + heldLines(held)})
	}
	return res
}

func heldLines(held []Held) string {
	lines := make([]string, len(held))
	for i, h := range held {
		lines[i] = "- " + h.String()
	}
	return strings.Join(lines, "\n")
}

// jsText is JSON.stringify(v, null, 2): encoding/json's indented form, with
// <, >, & and U+2028/U+2029 written as themselves, as JavaScript does.
func jsText(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v) // plain structs of strings
	out := strings.TrimSuffix(b.String(), "\n")
	if !strings.Contains(out, `\u202`) {
		return out
	}
	var w strings.Builder
	for i := 0; i < len(out); i++ {
		if out[i] == '\\' && i+5 < len(out) && (out[i+1:i+6] == "u2028" || out[i+1:i+6] == "u2029") {
			w.WriteString(map[string]string{"u2028": "\u2028", "u2029": "\u2029"}[out[i+1:i+6]])
			i += 5
			continue
		}
		if out[i] == '\\' && i+1 < len(out) { // any other escape: copy both bytes
			w.WriteString(out[i : i+2])
			i++
			continue
		}
		w.WriteByte(out[i])
	}
	return w.String()
}

// toolErr words a failure for the model; a store failure is not detailed.
func toolErr(err error) error {
	if err == nil {
		return nil
	}
	var ce *custody.Error
	if errors.As(err, &ce) {
		return errors.New(ce.Msg)
	}
	if errors.Is(err, custody.ErrForbidden) || errors.Is(err, custody.ErrInvalid) || errors.Is(err, custody.ErrNotFound) {
		return err
	}
	return fmt.Errorf("custody could not complete the call (%v); nothing after the failure was written, retry", err)
}
