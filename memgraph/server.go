package memgraph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	custody "github.com/custody-mem/custody"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultNamespace is the root namespace of the graph's records.
const DefaultNamespace = "graph"

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
		EntityNames []string `json:"entityNames" jsonschema:"An array of entity names to delete"`
	}
	deletionsInput struct {
		Deletions []Deletion `json:"deletions"`
	}
	deleteRelInput struct {
		Relations []Relation `json:"relations" jsonschema:"An array of relations to delete"`
	}
	emptyInput struct{}
	queryInput struct {
		Query string `json:"query" jsonschema:"The search query to match against entity names, types, and observation content"`
	}
	namesInput struct {
		Names []string `json:"names" jsonschema:"An array of entity names to retrieve"`
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

var (
	readOnly    = &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: jsonschema.Ptr(false)}
	additive    = &mcp.ToolAnnotations{DestructiveHint: jsonschema.Ptr(false), OpenWorldHint: jsonschema.Ptr(false)}
	destructive = &mcp.ToolAnnotations{DestructiveHint: jsonschema.Ptr(true), IdempotentHint: true, OpenWorldHint: jsonschema.Ptr(false)}
)

// NewServer returns the MCP server of graph g, whose records are written in
// custody session (named in its instructions for a harness).
func NewServer(g *Graph, version string) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "custody-memory-graph", Title: "custody knowledge graph memory", Version: version},
		&mcp.ServerOptions{
			Instructions: "A knowledge graph memory kept by custody: every entity, observation and relation is a memory " +
				"with provenance, admitted by custody's policy; what it holds for review is not part of the graph until approved. " +
				"custody session: " + g.session,
			Capabilities: &mcp.ServerCapabilities{},
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "create_entities", Title: "Create Entities",
		Description: "Create multiple new entities in the knowledge graph", Annotations: additive},
		func(ctx context.Context, _ *mcp.CallToolRequest, in entitiesInput) (*mcp.CallToolResult, entitiesInput, error) {
			out, held, err := g.CreateEntities(ctx, in.Entities)
			return answer(out, held, err), entitiesInput{Entities: out}, toolErr(err)
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "create_relations", Title: "Create Relations",
		Description: "Create multiple new relations between entities in the knowledge graph. Relations should be in active voice", Annotations: additive},
		func(ctx context.Context, _ *mcp.CallToolRequest, in relationsInput) (*mcp.CallToolResult, relationsInput, error) {
			out, held, err := g.CreateRelations(ctx, in.Relations)
			return answer(out, held, err), relationsInput{Relations: out}, toolErr(err)
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "add_observations", Title: "Add Observations",
		Description: "Add new observations to existing entities in the knowledge graph", Annotations: additive},
		func(ctx context.Context, _ *mcp.CallToolRequest, in observationsInput) (*mcp.CallToolResult, resultsOutput, error) {
			out, held, err := g.AddObservations(ctx, in.Observations)
			return answer(out, held, err), resultsOutput{Results: out}, toolErr(err)
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "delete_entities", Title: "Delete Entities",
		Description: "Delete multiple entities and their associated relations from the knowledge graph", Annotations: destructive},
		func(ctx context.Context, _ *mcp.CallToolRequest, in entityNamesInput) (*mcp.CallToolResult, successOutput, error) {
			held, err := g.DeleteEntities(ctx, in.EntityNames)
			return done("Entities deleted successfully", held, err)
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "delete_observations", Title: "Delete Observations",
		Description: "Delete specific observations from entities in the knowledge graph", Annotations: destructive},
		func(ctx context.Context, _ *mcp.CallToolRequest, in deletionsInput) (*mcp.CallToolResult, successOutput, error) {
			held, err := g.DeleteObservations(ctx, in.Deletions)
			return done("Observations deleted successfully", held, err)
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "delete_relations", Title: "Delete Relations",
		Description: "Delete multiple relations from the knowledge graph", Annotations: destructive},
		func(ctx context.Context, _ *mcp.CallToolRequest, in deleteRelInput) (*mcp.CallToolResult, successOutput, error) {
			held, err := g.DeleteRelations(ctx, in.Relations)
			return done("Relations deleted successfully", held, err)
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "read_graph", Title: "Read Graph",
		Description: "Read the entire knowledge graph", Annotations: readOnly},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ emptyInput) (*mcp.CallToolResult, KnowledgeGraph, error) {
			kg, err := g.ReadGraph(ctx)
			return answer(kg, nil, err), kg, toolErr(err)
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "search_nodes", Title: "Search Nodes",
		Description: "Search for nodes in the knowledge graph based on a query", Annotations: readOnly},
		func(ctx context.Context, _ *mcp.CallToolRequest, in queryInput) (*mcp.CallToolResult, KnowledgeGraph, error) {
			kg, err := g.SearchNodes(ctx, in.Query)
			return answer(kg, nil, err), kg, toolErr(err)
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "open_nodes", Title: "Open Nodes",
		Description: "Open specific nodes in the knowledge graph by their names", Annotations: readOnly},
		func(ctx context.Context, _ *mcp.CallToolRequest, in namesInput) (*mcp.CallToolResult, KnowledgeGraph, error) {
			kg, err := g.OpenNodes(ctx, in.Names)
			return answer(kg, nil, err), kg, toolErr(err)
		})
	return srv
}

// answer is a tool's text: the result as indented JSON, as the reference
// server gives it, and what admission held, if anything.
func answer(v any, held []Held, err error) *mcp.CallToolResult {
	if err != nil {
		return nil
	}
	b, _ := json.MarshalIndent(v, "", "  ") // plain structs
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
	return withHeld(res, held)
}

func done(msg string, held []Held, err error) (*mcp.CallToolResult, successOutput, error) {
	if err != nil {
		return nil, successOutput{}, toolErr(err)
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
	return withHeld(res, held), successOutput{Success: true, Message: msg}, nil
}

func withHeld(res *mcp.CallToolResult, held []Held) *mcp.CallToolResult {
	if len(held) == 0 {
		return res
	}
	lines := make([]string, len(held))
	for i, h := range held {
		lines[i] = "- " + h.String()
	}
	res.Content = append(res.Content, &mcp.TextContent{Text: "custody did not admit these writes; they are not part of the graph " +
		"until a reviewer approves them or the owner confirms them:\n" + strings.Join(lines, "\n")})
	return res
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
