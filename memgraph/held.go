package memgraph

import (
	"context"
	"fmt"
	"strings"

	custody "github.com/custody-mem/custody"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// deleted is a delete tool's answer. When every deletion was made it is
// the reference's: success and its message. A deletion admission held is
// not made, and the answer never says it was: success is false, and the
// message names each held deletion and how it can still be made. A
// deletion that waits for the owner's confirmation (a sensitive name, a
// payee or an account) is put to the user at once when the MCP client can
// ask (elicitation) and the session acts as the owner: yes confirms it,
// as the owner's console page would.
func (t *tools) deleted(ctx context.Context, req *mcp.CallToolRequest, done string, held []Held, err error) (*mcp.CallToolResult, bool, error) {
	if err != nil {
		return nil, false, toolErr(err)
	}
	if len(held) > 0 {
		held = t.askOwner(ctx, req, held)
	}
	if len(held) == 0 {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: done}}, StructuredContent: successOutput{Success: true, Message: done}}, true, nil
	}
	msg := fmt.Sprintf("Not deleted: custody holds %d of these deletions, and they are not made until ", len(held)) +
		"the owner confirms them (on the console's owner page, /console#mine, or POST /v1/memories/ID/confirm with her token) " +
		"or a reviewer approves them (custody review); the rest were deleted:\n" + heldLines(held)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: msg}}, StructuredContent: successOutput{Success: false, Message: msg}}, true, nil
}

var confirmSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"confirm": map[string]any{"type": "boolean", "title": "Delete", "description": "yes makes these deletions now"},
	},
	"required": []string{"confirm"},
}

// askOwner asks the user to confirm the deletions that wait for the
// owner, when the client can ask; it returns those still held.
func (t *tools) askOwner(ctx context.Context, req *mcp.CallToolRequest, held []Held) []Held {
	c, ok := t.g.b.(Confirmer)
	ip := req.Session.InitializeParams()
	if !ok || ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil {
		return held
	}
	var waiting []string
	for _, h := range held {
		if h.State == custody.StatePendingConfirmation {
			waiting = append(waiting, "- "+h.What)
		}
	}
	if len(waiting) == 0 {
		return held
	}
	ans, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "form", RequestedSchema: confirmSchema,
		Message: "custody needs the owner's confirmation before it deletes these sensitive memories:\n" + strings.Join(waiting, "\n")})
	if err != nil || ans == nil || ans.Action != "accept" || ans.Content["confirm"] != true {
		return held
	}
	var still []Held
	for _, h := range held {
		if h.State == custody.StatePendingConfirmation {
			if _, err := c.Confirm(ctx, h.ID); err == nil {
				continue
			}
		}
		still = append(still, h)
	}
	return still
}
