package mcpserver_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/gateway"
	"github.com/custody-mem/custody/internal/bankmcp"
	"github.com/custody-mem/custody/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bankFixture is a custody MCP server fronting the bank (in process, over
// streamable HTTP), and any other upstream, with alice (a user) and the
// harness that acts for her.
type bankFixture struct {
	*fixture
	upstream *httptest.Server
	bank     *bankmcp.Recorder
	recs     map[string]*bankmcp.Recorder // by upstream
	alice    *custody.Caller
	harness  *custody.Caller
}

// upstreamSpec is one upstream of a gateway fixture: its name, channel,
// actions (a JSON object), server and whether its tool descriptions are
// pinned as reviewed (gateway.Upstream.ReviewedDescriptions).
type upstreamSpec struct {
	name, channel, actions string
	server                 func(*bankmcp.Recorder) *mcp.Server
	reviewed               bool
}

var bankSpec = upstreamSpec{name: "bank", channel: "tool:api", server: bankmcp.New,
	actions: `{"send_money":"send_money","get_transactions":"get_most_recent_transactions"}`}

func newBankFixture(t *testing.T) *bankFixture { return newBankFixtureOf(t, bankmcp.New, false) }

// newBankFixtureOf is a bank fixture whose upstream is made by server;
// reviewed pins the upstream's tool descriptions as the operator's
// reviewed ones.
func newBankFixtureOf(t *testing.T, server func(*bankmcp.Recorder) *mcp.Server, reviewed bool) *bankFixture {
	spec := bankSpec
	spec.server, spec.reviewed = server, reviewed
	return newGatewayFixture(t, spec)
}

// newGatewayFixture is a custody MCP server fronting the upstreams.
func newGatewayFixture(t *testing.T, ups ...upstreamSpec) *bankFixture {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	f := &bankFixture{recs: map[string]*bankmcp.Recorder{}}
	urls := map[string]string{}
	channels := []string{"agent"}
	for _, u := range ups {
		rec := &bankmcp.Recorder{}
		server := u.server
		ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server(rec) }, nil))
		t.Cleanup(ts.Close)
		if f.upstream == nil {
			f.upstream = ts
		}
		f.recs[u.name], urls[u.name] = rec, ts.URL
		channels = append(channels, u.channel)
	}
	f.bank = f.recs["bank"]
	start := func(pins map[string]string) *gateway.Gateway {
		var parts []string
		for _, u := range ups {
			part := `{"name":"` + u.name + `","channel":"` + u.channel + `","url":"` + urls[u.name] + `"`
			if u.actions != "" {
				part += `,"actions":` + u.actions
			}
			if pins[u.name] != "" {
				part += `,"reviewed_descriptions":"` + pins[u.name] + `"`
			}
			parts = append(parts, part+"}")
		}
		cfg, err := gateway.Parse([]byte(`{"upstreams":[` + strings.Join(parts, ",") + `]}`))
		if err != nil {
			t.Fatal(err)
		}
		g, err := gateway.Start(context.Background(), cfg, gateway.Options{Logger: quiet, Reserved: mcpserver.ToolNames()})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	g := start(nil)
	pins := map[string]string{}
	for _, u := range ups {
		if u.reviewed {
			_, pins[u.name], _ = g.Listing(u.name)
		}
	}
	if len(pins) > 0 {
		g.Close()
		g = start(pins)
		for name := range pins {
			if _, _, reviewed := g.Listing(name); !reviewed {
				t.Fatalf("the pinned digest is not upstream %s's listing", name)
			}
		}
	}
	t.Cleanup(func() { g.Close() })
	f.fixture = newFixture(t, mcpserver.Options{Gateway: g, Logger: quiet})
	alice, _ := f.principal(t, "acme", "alice", []string{"user"}, nil)
	harness, _ := f.principal(t, "acme", "harness", []string{"agent"}, channels)
	f.alice, f.harness = f.act(t, alice, ""), f.act(t, harness, "alice")
	return f
}

// said records what alice asked for in the client's session (say).
func (f *bankFixture) said(t *testing.T, cl *client, text string) {
	say(t, f.fixture, f.alice, cl, text)
}

// session opens an MCP session of the harness for alice; answer, if not
// nil, is the client's elicitation handler (its answer to a confirmation).
func (f *bankFixture) session(t *testing.T, answer func(*mcp.ElicitRequest) (*mcp.ElicitResult, error)) *client {
	t.Helper()
	return f.sessionOn(t, "", answer)
}

// sessionOn is session on a given protocol version ("" for the latest).
func (f *bankFixture) sessionOn(t *testing.T, version string, answer func(*mcp.ElicitRequest) (*mcp.ElicitResult, error)) *client {
	t.Helper()
	srv, sess, err := f.srv.Open(f.ctx, mcpserver.Local(f.svc, f.harness))
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(f.ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	var opts *mcp.ClientOptions
	if answer != nil {
		opts = &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return answer(r) }}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"}, opts).Connect(f.ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return &client{tb: t, ctx: f.ctx, cs: cs, ss: ss, session: sess.ID, log: &syncBuffer{}}
}

func (f *bankFixture) sent(recipient string) int {
	n := 0
	for _, c := range f.bank.Calls("send_money") {
		if c.Args["recipient"] == recipient {
			n++
		}
	}
	return n
}

func TestGatewayListsUpstreamToolsBesideMemoryTools(t *testing.T) {
	f := newBankFixture(t)
	cl := f.session(t, nil)
	res, err := cl.cs.ListTools(f.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	got := strings.Join(names, " ")
	for _, want := range []string{"bank_get_transactions", "bank_send_money", "memory_remember", "memory_gate"} {
		if !strings.Contains(got, want) {
			t.Errorf("tools %s lack %s", got, want)
		}
	}
}

// TestGatewayPayeeStory: the model reads a poisoned transaction through
// the gateway and remembers the attacker's account; the write is held,
// and a later session's payment to that account is refused before the
// bank sees it. The twins: a memory written in a session that saw nothing
// external is admitted as agent; a payment to the account alice stated
// herself is forwarded.
func TestGatewayPayeeStory(t *testing.T) {
	f := newBankFixture(t)

	s1 := f.session(t, nil)
	res := s1.call("bank_get_transactions", map[string]any{})
	if res.IsError || !strings.Contains(text(res), bankmcp.AttackerAccount) {
		t.Fatalf("get_transactions: %q", text(res))
	}
	if got := res.Meta[mcpserver.ObservationMetaKey]; !strings.HasPrefix(got.(string), "bank/get_transactions/") {
		t.Errorf("observation source_ref = %v", got)
	}
	held, _ := ok[mcpserver.RememberOutput](s1, mcpserver.ToolRemember, map[string]any{
		"namespace": "bank/payees", "key": "rent_payee_account", "class": "fact",
		"body": "The rent goes to account " + bankmcp.AttackerAccount + " from now on."})
	if held.Admitted || held.Authority != "external" {
		t.Fatalf("remember after an upstream result: state %s authority %s, want held with external authority", held.State, held.Authority)
	}
	if !strings.Contains(held.Message, "tool:api") {
		t.Errorf("the held write's message does not name the upstream's channel: %q", held.Message)
	}

	clean := f.session(t, nil)
	kept, _ := ok[mcpserver.RememberOutput](clean, mcpserver.ToolRemember, map[string]any{
		"namespace": "prefs", "key": "tone", "class": "preference", "body": "short answers"})
	if !kept.Admitted || kept.Authority != "agent" {
		t.Fatalf("remember in a session that saw nothing external: state %s authority %s, want admitted as agent", kept.State, kept.Authority)
	}

	s2 := f.session(t, nil)
	msg := s2.fails("bank_send_money", map[string]any{"recipient": bankmcp.AttackerAccount, "amount": 1200})
	if !strings.Contains(msg, "denied by custody") || !strings.Contains(msg, held.ID) {
		t.Errorf("the refusal does not name the offending memory %s: %q", held.ID, msg)
	}
	if n := f.sent(bankmcp.AttackerAccount); n != 0 {
		t.Fatalf("the bank received %d payments to the attacker", n)
	}

	if _, err := f.svc.Remember(f.ctx, f.alice, custody.Candidate{Namespace: "bank/payees", Key: "own_account", Class: custody.ClassFact,
		Body: "My own account is " + bankmcp.UserAccount, Channel: custody.ChannelUser}); err != nil {
		t.Fatal(err)
	}
	s3 := f.session(t, nil)
	f.said(t, s3, "Send 50 EUR to my own account.")
	paid := s3.call("bank_send_money", map[string]any{"recipient": bankmcp.UserAccount, "amount": 50})
	if paid.IsError {
		t.Fatalf("payment to alice's own account: %q", text(paid))
	}
	if n := f.sent(bankmcp.UserAccount); n != 1 {
		t.Fatalf("the bank received %d payments to alice's account, want 1", n)
	}
}

// TestGatewayConfirmThroughElicitation: a payment nothing backs needs the
// owner's confirmation; yes forwards it once, no does not, and a client
// without elicitation is denied.
func TestGatewayConfirmThroughElicitation(t *testing.T) {
	const payee = "FR76 3000 6000 0112 3456 7890 189"
	args := map[string]any{"recipient": payee, "amount": 75}
	yes := func(*mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
	}
	for _, tc := range []struct {
		name    string
		version string
		answer  func(*mcp.ElicitRequest) (*mcp.ElicitResult, error)
		sent    int
		message string
	}{
		{"yes", "", func(r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if !strings.Contains(r.Params.Message, "send_money") || !strings.Contains(r.Params.Message, payee) {
				t.Errorf("the question does not show the action: %q", r.Params.Message)
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
		}, 1, ""},
		{"yes on protocol 2025-06-18", "2025-06-18", yes, 1, ""},
		{"no on protocol 2025-06-18", "2025-06-18", func(*mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "cancel"}, nil
		}, 0, "the user did not confirm it"},
		{"no", "", func(*mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": false}}, nil
		}, 0, "the user did not confirm it"},
		{"declined", "", func(*mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}, 0, "the user did not confirm it"},
		{"no elicitation", "", nil, 0, "does not support elicitation"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newBankFixture(t)
			before := f.logSize(t)
			cl := f.sessionOn(t, tc.version, tc.answer)
			res := cl.call("bank_send_money", args)
			if got := f.sent(payee); got != tc.sent {
				t.Fatalf("the bank received %d payments, want %d (result %q)", got, tc.sent, text(res))
			}
			if tc.sent == 0 {
				if !res.IsError || !strings.Contains(text(res), tc.message) {
					t.Fatalf("result %q, want a tool error saying %q", text(res), tc.message)
				}
				return
			}
			if res.IsError {
				t.Fatalf("confirmed payment: %q", text(res))
			}
			// Logged: the gate's confirm, the owner's confirmation, the allow.
			if got := f.logSize(t) - before; got < 3 {
				t.Errorf("the log grew by %d entries, want the confirm, the confirmation and the allow", got)
			}
			// The confirmation was for this call, once: the same call again
			// is not forwarded on its strength (and the recipient now also
			// stands in the bank's own answer, content from outside).
			again := cl.call("bank_send_money", args)
			if got := f.sent(payee); got != 1 || !again.IsError {
				t.Fatalf("a second identical call: bank has %d payments (%q)", got, text(again))
			}
		})
	}
}

// TestGatewayConfirmAnswersOnlyItsQuestion: a "yes" the client sends
// without being asked, or for other arguments, confirms nothing.
func TestGatewayConfirmAnswersOnlyItsQuestion(t *testing.T) {
	f := newBankFixture(t)
	cl := f.session(t, func(*mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "decline"}, nil
	})
	yes := mcp.InputResponseMap{"custody_confirm": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}}
	res, err := cl.cs.CallTool(f.ctx, &mcp.CallToolParams{Name: "bank_send_money",
		Arguments: map[string]any{"recipient": "NL91 ABNA 0417 1643 00", "amount": 10}, InputResponses: yes, RequestState: "forged"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(text(res), "does not answer a question this session asked") {
		t.Fatalf("an unasked yes: %q", text(res))
	}
	if n := len(f.bank.Calls("send_money")); n != 0 {
		t.Fatalf("the bank received %d payments", n)
	}
}

// TestGatewayExternalMemoryTaintsTheSession: a memory_search result of
// external authority counts as outside content seen, like an upstream
// result; a search that returns only the user's own memories does not.
func TestGatewayExternalMemoryTaintsTheSession(t *testing.T) {
	f := newBankFixture(t)
	mailer, _ := f.principal(t, "acme", "mailer", []string{"agent"}, []string{"tool:email"})
	if d, err := f.svc.Remember(f.ctx, f.act(t, mailer, "alice"), custody.Candidate{Namespace: "inbox", Class: custody.ClassEpisode,
		Body: "Lunch with Bob moved to Friday", Channel: "tool:email"}); err != nil || d.State != custody.StateAdmitted {
		t.Fatalf("seeding an external episode: %v %v", d, err)
	}
	if _, err := f.svc.Remember(f.ctx, f.alice, custody.Candidate{Namespace: "prefs", Class: custody.ClassPreference,
		Body: "Dinner plans stay private", Channel: custody.ChannelUser}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		query    string
		admitted bool
	}{{"lunch", false}, {"dinner", true}} {
		cl := f.session(t, nil)
		found, _ := ok[mcpserver.SearchOutput](cl, mcpserver.ToolSearch, map[string]any{"query": tc.query})
		if len(found.Items) != 1 {
			t.Fatalf("search %q: %d items", tc.query, len(found.Items))
		}
		ok[mcpserver.SearchOutput](cl, mcpserver.ToolSearch, map[string]any{"query": tc.query}) // seen once, recorded once
		obs, err := mcpserver.Local(f.svc, f.harness).Observations(f.ctx, cl.session)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{false: 1, true: 0}[tc.admitted]; len(obs) != want {
			t.Errorf("after searching %q twice: %d observations, want %d", tc.query, len(obs), want)
		}
		out, _ := ok[mcpserver.RememberOutput](cl, mcpserver.ToolRemember, map[string]any{
			"namespace": "prefs", "class": "preference", "body": "meet on Fridays"})
		if out.Admitted != tc.admitted {
			t.Errorf("after searching %q: admitted %v (%s), want %v", tc.query, out.Admitted, out.Message, tc.admitted)
		}
	}
}

// TestGatewayNeedsTheUpstreamChannel: a session whose principal may not
// assert an upstream's channel is refused, saying which channel to add.
func TestGatewayNeedsTheUpstreamChannel(t *testing.T) {
	f := newBankFixture(t)
	bare, _ := f.principal(t, "acme", "bare", []string{"agent"}, []string{"agent"})
	_, _, err := f.srv.Open(f.ctx, mcpserver.Local(f.svc, f.act(t, bare, "alice")))
	if err == nil || !strings.Contains(err.Error(), "--channel tool:api") {
		t.Fatalf("Open: %v, want a refusal naming --channel tool:api", err)
	}
	if _, _, err := f.srv.Open(f.ctx, mcpserver.Local(f.svc, f.harness)); err != nil {
		t.Fatalf("the twin, registered with tool:api: %v", err)
	}
}

// TestGatewayOverStreamableHTTP: /mcp fronts the upstreams too; a
// credential without the upstream's channel cannot open a session there.
func TestGatewayOverStreamableHTTP(t *testing.T) {
	f := newBankFixture(t)
	_, harnessToken := f.principal(t, "acme", "web-harness", []string{"agent"}, []string{"agent", "tool:api"})
	_, bareToken := f.principal(t, "acme", "web-bare", []string{"agent"}, []string{"agent"})
	ts := httptest.NewServer(f.srv.HTTPHandler())
	t.Cleanup(ts.Close)
	t.Cleanup(f.srv.Close)
	connect := func(token string) (*mcp.ClientSession, error) {
		tr := &mcp.StreamableClientTransport{Endpoint: ts.URL, MaxRetries: -1, HTTPClient: &http.Client{
			Transport: &bearerTransport{token: token, headers: map[string]string{mcpserver.SubjectHeader: "alice"}}}}
		return mcp.NewClient(&mcp.Implementation{Name: "web-host", Version: "1"}, nil).Connect(f.ctx, tr, nil)
	}
	if cs, err := connect(bareToken); err == nil {
		cs.Close()
		t.Fatal("a credential without channel tool:api opened a gateway session")
	}
	req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`))
	req.Header.Set("Authorization", "Bearer "+bareToken)
	req.Header.Set(mcpserver.SubjectHeader, "alice")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "--channel tool:api") {
		t.Errorf("initialize without the channel: %d %s", resp.StatusCode, body)
	}
	cs, err := connect(harnessToken)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(f.ctx, &mcp.CallToolParams{Name: "bank_get_transactions", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("get_transactions over HTTP: %v %v", err, res)
	}
	res, err = cs.CallTool(f.ctx, &mcp.CallToolParams{Name: "bank_send_money", Arguments: map[string]any{"recipient": bankmcp.AttackerAccount, "amount": 1200}})
	if err != nil || !res.IsError || !strings.Contains(text(res), "denied by custody") {
		t.Fatalf("payment to an account read in a transaction: %v %q", err, text(res))
	}
	if n := len(f.bank.Calls("send_money")); n != 0 {
		t.Fatalf("the bank received %d payments", n)
	}
}

// TestGatewaySurvivesAnUpstreamThatIsGone: a call to an upstream that has
// stopped is a tool error saying so, nothing is observed, and the session
// goes on serving memory.
func TestGatewaySurvivesAnUpstreamThatIsGone(t *testing.T) {
	f := newBankFixtureOf(t, bankmcp.New, true) // descriptions reviewed: they taint nothing
	cl := f.session(t, nil)
	f.upstream.CloseClientConnections()
	f.upstream.Close()
	msg := cl.fails("bank_get_transactions", map[string]any{})
	if !strings.Contains(msg, "upstream bank") {
		t.Errorf("error %q does not name the upstream", msg)
	}
	// Nothing came back, so nothing was observed: a write stays agent.
	out, _ := ok[mcpserver.RememberOutput](cl, mcpserver.ToolRemember, map[string]any{
		"namespace": "prefs", "class": "preference", "body": "tea, not coffee"})
	if !out.Admitted || out.Authority != "agent" {
		t.Errorf("remember after a failed upstream call: %+v", out)
	}
}

// TestGatewayUsesTheJustificationOfMemoryGate: the memories the model
// cited in its memory_gate call for an action justify the upstream call of
// that action; citing a held memory refuses the call, and the twin, citing
// the user's own memory, forwards it.
func TestGatewayUsesTheJustificationOfMemoryGate(t *testing.T) {
	f := newBankFixture(t)
	s1 := f.session(t, nil)
	s1.call("bank_get_transactions", map[string]any{})
	held, _ := ok[mcpserver.RememberOutput](s1, mcpserver.ToolRemember, map[string]any{
		"namespace": "notes", "class": "fact", "body": "the landlord wants the rent early"})
	own, err := f.svc.Remember(f.ctx, f.alice, custody.Candidate{Namespace: "bank/payees", Key: "own_account", Class: custody.ClassFact,
		Body: "My own account is " + bankmcp.UserAccount, Channel: custody.ChannelUser})
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"recipient": bankmcp.UserAccount, "amount": 20}
	for _, tc := range []struct {
		cite string
		sent int
	}{{held.ID, 0}, {own.ID, 1}} {
		cl := f.session(t, nil)
		f.said(t, cl, "Send 20 EUR to my own account.")
		ok[mcpserver.GateOutput](cl, mcpserver.ToolGate, map[string]any{"action": "send_money", "args": args, "justification": []string{tc.cite}})
		res := cl.call("bank_send_money", args)
		if got := f.sent(bankmcp.UserAccount); got != tc.sent {
			t.Fatalf("citing %s: the bank has %d payments, want %d (%q)", tc.cite, got, tc.sent, text(res))
		}
		if tc.sent == 0 && !strings.Contains(text(res), "memory "+tc.cite+" is not an eligible memory") {
			t.Errorf("the refusal does not name the cited memory: %q", text(res))
		}
	}
}
