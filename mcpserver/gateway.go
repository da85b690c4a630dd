package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/gateway"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file is the boundary between the model and the upstream MCP servers
// of Options.Gateway. Each upstream tool is listed as <upstream>_<tool>; a
// call of it is
//
//  1. asked of the gate as the tool's action (gateway.Tool.Action), with
//     the call's arguments, the MCP session's custody session and the
//     justification of the session's latest memory_gate call for that
//     action (none if there was none), so that every argument value the
//     policy traces is looked up in the subject's memories and in what
//     this session observed;
//  2. on allow, forwarded; on deny, answered with a tool error naming the
//     reasons and offending sources, and never forwarded; on confirm, put to
//     the user through MCP elicitation when the client supports it (yes is
//     the owner's confirmation of that exact action, logged; then the gate
//     is asked again), and denied otherwise;
//  3. its result recorded as an observation of the session on the
//     upstream's channel (source_ref <upstream>/<tool>/<call id>) before it
//     is returned, so the session floor (rule 7) applies to every memory
//     the model writes after it. A result that cannot be recorded is not
//     returned.
//
// memory_search, memory_get and memory_history results that carry external
// authority are recorded as observations the same way (source_ref
// memory:<id>), since they put outside content in the model's context too.

// Boundary is what the gateway needs of a backend beyond Backend: to
// record observations and the owner's confirmations. Local implements it.
type Boundary interface {
	// Observe records what entered the model's context in a session.
	Observe(ctx context.Context, session string, in custody.ObservationInput) error
	// ConfirmAction records the subject's confirmation, on the user
	// channel, of an exact action and arguments.
	ConfirmAction(ctx context.Context, action string, args map[string]any) error
	// Endorse records the subject's endorsement, on the user channel, of
	// a source of the session for actions (custody.Service.Endorse).
	Endorse(ctx context.Context, session string, in custody.EndorseInput) error
	// Principal is the credential the MCP session runs as, or nil if the
	// backend cannot tell.
	Principal() *custody.Principal
}

func (l local) Observe(ctx context.Context, session string, in custody.ObservationInput) error {
	_, err := l.svc.Observe(ctx, l.c, session, in)
	return err
}

// ConfirmAction confirms as the subject's own user credential: the answer
// came from the user, through the MCP client's elicitation.
func (l local) ConfirmAction(ctx context.Context, action string, args map[string]any) error {
	_, err := l.svc.ConfirmAction(ctx, &custody.Caller{Principal: l.c.Subject, Subject: l.c.Subject}, action, args)
	return err
}

// Endorse endorses as the subject's own user credential: the answer came
// from the user, through the MCP client's elicitation.
func (l local) Endorse(ctx context.Context, session string, in custody.EndorseInput) error {
	_, err := l.svc.Endorse(ctx, &custody.Caller{Principal: l.c.Subject, Subject: l.c.Subject}, session, in)
	return err
}

func (l local) Principal() *custody.Principal { return l.c.Principal }

// ToolNames are the names of custody's own tools, which no upstream tool
// may be listed as (gateway.Options.Reserved).
func ToolNames() []string {
	return []string{ToolSearch, ToolGet, ToolRemember, ToolGate, ToolHistory}
}

// Gateway metadata keys of an upstream tool result.
const (
	// ObservationMetaKey is the source_ref the result was observed as.
	ObservationMetaKey = "custody/observation"
	// GateMetaKey is the log index of the gate decision that let it run.
	GateMetaKey = "custody/gate_log_index"
)

// checkGateway refuses a session whose backend cannot record observations,
// or whose principal may not assert an upstream's channel.
func (s *Server) checkGateway(b Backend) error {
	g := s.opts.Gateway
	if g == nil {
		return nil
	}
	bd, ok := b.(Boundary)
	if !ok {
		return &custody.Error{Kind: custody.ErrInvalid, Msg: "the gateway needs a backend that records observations; serve on the store (--db), not --url"}
	}
	for _, t := range g.Tools() {
		if slices.Contains(ToolNames(), t.Name) {
			return &custody.Error{Kind: custody.ErrInvalid, Msg: fmt.Sprintf("upstream %s lists a tool named like custody's own %s; rename the upstream", t.Upstream, t.Name)}
		}
	}
	p := bd.Principal()
	if p == nil {
		return nil
	}
	chans := g.Channels()
	names := make([]string, 0, len(chans))
	for ch := range chans {
		names = append(names, ch)
	}
	sort.Strings(names)
	for _, ch := range names {
		if !p.MayAssert(ch) {
			return &custody.Error{Kind: custody.ErrForbidden, Msg: fmt.Sprintf(
				"principal %s is not registered for channel %s, on which the gateway records the results of upstream %s; "+
					"register it with that channel too (custody principal add ... --channel %s, next to its other --channel flags)",
				p.ID(), ch, strings.Join(chans[ch], ", "), ch)}
		}
	}
	return nil
}

// gatewayState is what one MCP session remembers for its upstream calls:
// the justification of its latest memory_gate call per action.
type gatewayState struct {
	mu            sync.Mutex
	justification map[string][]string
	asked         map[string]question // request state → a pending question
	seen          map[string]bool     // memories already observed in the session
}

// firstSight reports whether the memory has not been observed in the
// session yet, and marks it observed.
func (g *gatewayState) firstSight(id string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.seen[id] {
		return false
	}
	if g.seen == nil {
		g.seen = map[string]bool{}
	}
	g.seen[id] = true
	return true
}

// unsee forgets that a memory was observed, when recording it failed.
func (g *gatewayState) unsee(id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.seen, id)
}

// maxAsked bounds the unanswered questions a session keeps.
const maxAsked = 16

// question is a confirmation the session asked the user for: the digest
// of the exact call, and the sources it offered her to endorse.
type question struct {
	digest    string
	endorsing []string
}

// ask remembers a question about the call of digest and returns the
// request state its answer must echo.
func (g *gatewayState) ask(digest string, endorsing []string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.asked == nil || len(g.asked) >= maxAsked {
		g.asked = map[string]question{}
	}
	state := callID() + callID()
	g.asked[state] = question{digest: digest, endorsing: slices.Clone(endorsing)}
	return state
}

// answered returns the pending question state names, if it is about the
// call of digest, and forgets it.
func (g *gatewayState) answered(state, digest string) (question, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	q, ok := g.asked[state]
	delete(g.asked, state)
	return q, ok && q.digest == digest
}

func (g *gatewayState) setJustification(action string, ids []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.justification == nil {
		g.justification = map[string][]string{}
	}
	g.justification[action] = slices.Clone(ids)
}

func (g *gatewayState) justificationFor(t gateway.Tool) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if j, ok := g.justification[t.Action]; ok {
		return slices.Clone(j)
	}
	return slices.Clone(g.justification[t.Name])
}

// addUpstreamTools lists the gateway's tools on srv.
func (ss *session) addUpstreamTools(srv *mcp.Server) {
	g := ss.srv.opts.Gateway
	if g == nil {
		return
	}
	for _, t := range g.Tools() {
		srv.AddTool(t.Listed(), ss.upstreamCall(t))
	}
}

func (ss *session) upstreamCall(t gateway.Tool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if err := ss.check(req); err != nil {
			return nil, err
		}
		if err := ss.observeListing(ctx); err != nil {
			return toolFailure(fmt.Sprintf("the descriptions of the upstream tools could not be recorded as content seen in this session (%v); nothing was sent to %s. Retry later.", ss.toolError(ctx, t.Name, err), t.Upstream)), nil
		}
		raw := req.Params.Arguments
		args := map[string]any{}
		if len(raw) > 0 && string(raw) != "null" {
			if err := json.Unmarshal(raw, &args); err != nil {
				return toolFailure(fmt.Sprintf("invalid input: the arguments of %s must be a JSON object. Nothing was sent to %s.", t.Name, t.Upstream)), nil
			}
		}
		bd := ss.b.(Boundary) // checkGateway made sure
		in := custody.GateInput{Action: t.Action, Args: args, Justification: ss.gw.justificationFor(t), Session: ss.id}
		d, err := ss.b.Gate(ctx, in)
		if err != nil {
			return nil, ss.toolError(ctx, t.Name, err)
		}
		if d.Decision == custody.GateConfirm {
			var ask *mcp.CallToolResult
			if d, ask, err = ss.confirm(ctx, req, bd, t, in, d); err != nil || ask != nil {
				return ask, err
			}
		}
		if d.Decision != custody.GateAllow {
			return toolFailure(refusal(t, d)), nil
		}
		res, err := ss.srv.opts.Gateway.Call(ctx, t.Name, raw)
		if err != nil {
			var ge *gateway.Error
			if !errors.As(err, &ge) {
				return nil, ss.toolError(ctx, t.Name, err)
			}
			ss.srv.log.WarnContext(ctx, "gateway: upstream call failed", "tool", t.Name, "session", ss.id, "err", ge.Err)
			return toolFailure(ge.Msg), nil
		}
		ref := fmt.Sprintf("%s/%s/%s", t.Upstream, t.Remote.Name, callID())
		text := gateway.Text(res)
		if text == "" {
			text = "(an empty result of " + t.Name + ")"
		}
		if err := bd.Observe(ctx, ss.id, custody.ObservationInput{Channel: t.Channel, Text: text, SourceRef: ref}); err != nil {
			ss.srv.log.ErrorContext(ctx, "gateway: recording an upstream result", "tool", t.Name, "session", ss.id, "err", err)
			return toolFailure(fmt.Sprintf("the result of %s could not be recorded as content seen in this session (%v), so it is withheld; retry later", t.Name, ss.toolError(ctx, t.Name, err))), nil
		}
		if res.Meta == nil {
			res.Meta = mcp.Meta{}
		}
		res.Meta[SessionMetaKey] = ss.id
		res.Meta[ObservationMetaKey] = ref
		res.Meta[GateMetaKey] = d.LogIndex
		return res, nil
	}
}

// maxListingText bounds the text of one observation of a tool listing;
// an upstream whose tools say more is recorded in several.
const maxListingText = 64 << 10

// observeListing records what the model reads of each upstream's tools
// (gateway.Gateway.Listing: names, titles, descriptions, schema texts) as
// observations of the session on the upstream's channel, once per
// upstream and session: a description may carry instructions or values
// like any result, and the session floor and the gate must count it. An
// upstream whose descriptions the operator pinned as reviewed is skipped.
// It runs when the session lists its tools and before its first upstream
// call.
func (ss *session) observeListing(ctx context.Context) error {
	g := ss.srv.opts.Gateway
	bd, ok := ss.b.(Boundary)
	if g == nil || !ok {
		return nil
	}
	for _, up := range g.Upstreams() {
		texts, _, reviewed := g.Listing(up)
		if reviewed || len(texts) == 0 || !ss.gw.firstSight("tools/list:"+up) {
			continue
		}
		var chunks []string
		var cur strings.Builder
		for _, text := range texts {
			if len(text) > maxListingText {
				text = text[:maxListingText]
			}
			if cur.Len() > 0 && cur.Len()+len(text)+1 > maxListingText {
				chunks, cur = append(chunks, cur.String()), strings.Builder{}
			}
			if cur.Len() > 0 {
				cur.WriteByte('\n')
			}
			cur.WriteString(text)
		}
		chunks = append(chunks, cur.String())
		for _, text := range chunks {
			in := custody.ObservationInput{Channel: g.Channel(up), Text: strings.ToValidUTF8(text, "\uFFFD"), SourceRef: up + "/tools/list"}
			if err := bd.Observe(ctx, ss.id, in); err != nil {
				ss.gw.unsee("tools/list:" + up)
				return err
			}
		}
	}
	return nil
}

// observeListings is the middleware that records the upstream tools'
// descriptions when the session lists its tools (observeListing); a
// listing that cannot be recorded is not shown.
func (ss *session) observeListings(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "tools/list" {
			if err := ss.observeListing(ctx); err != nil {
				ss.srv.log.ErrorContext(ctx, "gateway: recording the upstream tools' descriptions", "session", ss.id, "err", err)
				return nil, fmt.Errorf("custody could not record the upstream tools' descriptions as content seen in this session, so it does not list them; retry later: %w", err)
			}
		}
		return next(ctx, method, req)
	}
}

// confirmInput names the elicitation of a confirmation among a call's
// input requests.
const confirmInput = "custody_confirm"

// confirm puts a confirm decision to the user, as an elicitation the call
// asks for (an input request: the SDK sends it to a client of an older
// protocol and calls again with the answer; a newer client answers and
// calls again itself). It returns the decision the call goes on with, or
// the result that asks.
//
// An answer counts only on the call that echoes the request state of a
// question this session asked about this exact action and arguments, and
// only once; yes is the owner's confirmation (logged), after which the
// gate is asked again.
func (ss *session) confirm(ctx context.Context, req *mcp.CallToolRequest, bd Boundary, t gateway.Tool, in custody.GateInput, d *custody.GateDecision) (*custody.GateDecision, *mcp.CallToolResult, error) {
	deny := func(why string) *custody.GateDecision {
		return &custody.GateDecision{Decision: custody.GateDeny, Reasons: append(slices.Clone(d.Reasons), why), Offending: d.Offending, LogIndex: d.LogIndex}
	}
	digest := custody.ActionDigest(in.Action, in.Args)
	if ans, ok := req.Params.InputResponses[confirmInput]; ok {
		q, ok := ss.gw.answered(req.Params.RequestState, digest)
		if !ok {
			return deny("the confirmation does not answer a question this session asked about this exact call"), nil, nil
		}
		r, _ := ans.(*mcp.ElicitResult)
		if r == nil || r.Action != "accept" {
			return deny("the user did not confirm it"), nil, nil
		}
		if r.Content["endorse"] == true {
			// The user's word that the sources may back this action, for
			// the rest of the session: logged, signed by her.
			for _, ref := range q.endorsing {
				if err := bd.Endorse(ctx, ss.id, custody.EndorseInput{SourceRef: ref, Actions: []string{in.Action}}); err != nil {
					return nil, nil, ss.toolError(ctx, t.Name, err)
				}
			}
			if d, err := ss.b.Gate(ctx, in); err != nil || d.Decision == custody.GateAllow || r.Content["confirm"] != true {
				return d, nil, err
			}
		}
		if r.Content["confirm"] != true {
			return deny("the user did not confirm it"), nil, nil
		}
		if err := bd.ConfirmAction(ctx, in.Action, in.Args); err != nil {
			return nil, nil, ss.toolError(ctx, t.Name, err)
		}
		d, err := ss.b.Gate(ctx, in)
		return d, nil, err
	}
	ip := req.Session.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil {
		return deny("this action needs the user's confirmation and this MCP client cannot ask the user (it does not support elicitation)"), nil, nil
	}
	args, _ := json.Marshal(in.Args)
	msg := fmt.Sprintf("Allow %s to run %s with %s?\ncustody asks because: %s", t.Upstream, t.Remote.Name, args, strings.Join(d.Reasons, "; "))
	return nil, &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{confirmInput: &mcp.ElicitParams{Mode: "form", Message: msg, RequestedSchema: confirmSchemaFor(in.Action, d.Endorsable)}},
		RequestState:  ss.gw.ask(digest, d.Endorsable),
	}, nil
}

// confirmSchemaFor is the form of a confirmation: run this call once; and,
// where values of the call come from sources of the session that nothing
// else backs, whether the user's own request named them, so that they
// back the action for the rest of the session (an endorsement).
func confirmSchemaFor(action string, endorsable []string) map[string]any {
	props := map[string]any{
		"confirm": map[string]any{"type": "boolean", "title": "Run this action", "description": "yes runs it once, exactly as shown"},
	}
	if len(endorsable) > 0 {
		props["endorse"] = map[string]any{"type": "boolean", "title": "I asked for this, from these sources",
			"description": fmt.Sprintf("yes: %s may back %s for the rest of this session, as if you had written its values; say yes only if your own request named it", strings.Join(endorsable, ", "), action)}
	}
	return map[string]any{"type": "object", "properties": props, "required": []string{"confirm"}}
}

// refusal is the tool error of a call the gate did not allow.
func refusal(t gateway.Tool, d *custody.GateDecision) string {
	var b strings.Builder
	fmt.Fprintf(&b, "denied by custody: %s was not sent to %s (action %s). ", t.Remote.Name, t.Upstream, t.Action)
	b.WriteString("Reasons: " + strings.Join(d.Reasons, "; ") + ".")
	if len(d.Offending) > 0 {
		b.WriteString(" Offending sources: " + strings.Join(d.Offending, ", ") + ".")
	}
	fmt.Fprintf(&b, " Gate decision at log index %d. Do not retry with the same values; ask the user.", d.LogIndex)
	return b.String()
}

func callID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// observeMemories records the memories a read returned that carry
// external authority as observations of the session: outside content is
// now in the model's context, once per memory and session. A backend that
// cannot record is skipped.
func (ss *session) observeMemories(ctx context.Context, ms []Memory) error {
	bd, ok := ss.b.(Boundary)
	if !ok {
		return nil
	}
	for _, m := range ms {
		if m.Authority != custody.AuthorityExternal.String() || m.Body == "" || !ss.gw.firstSight(m.ID+"@"+strconv.Itoa(m.Version)) {
			continue
		}
		ch := m.Channel
		if custody.ChannelAuthority(ch) != custody.AuthorityExternal {
			ch = "tool:memory" // an agent write of a tainted session, say
		}
		if err := bd.Observe(ctx, ss.id, custody.ObservationInput{Channel: ch, Text: m.Body, SourceRef: "memory:" + m.ID}); err != nil {
			ss.gw.unsee(m.ID + "@" + strconv.Itoa(m.Version))
			return err
		}
	}
	return nil
}
