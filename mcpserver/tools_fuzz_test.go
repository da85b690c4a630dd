package mcpserver_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/custody-mem/custody/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzTools calls every MCP tool with arbitrary arguments, as an agent
// acting for a user: each call answers (a result, a tool error or a
// protocol error) and the session goes on serving.
//
//	go test ./mcpserver -run '^$' -fuzz FuzzTools -fuzztime 10m
func FuzzTools(f *testing.F) {
	fx := newFixture(f, mcpserver.Options{})
	fx.principal(f, "acme", "alice", []string{"user"}, nil)
	harness, _ := fx.principal(f, "acme", "harness", []string{"agent"}, []string{"agent", "tool:email"})
	cl := fx.connect(f, fx.act(f, harness, "alice"))
	tools, err := cl.cs.ListTools(fx.ctx, nil)
	if err != nil {
		f.Fatal(err)
	}
	for i, args := range []string{`{}`, `null`, `[]`, `"x"`,
		`{"namespace":"notes","class":"episode","body":"I prefer short replies"}`,
		`{"namespace":"profile","key":"payee_account","class":"fact","body":"ACCT-7777","channel":"tool:email"}`,
		`{"query":"short replies","limit":5,"mode":"hybrid"}`, `{"query":"","limit":-1}`, `{"id":"01ARZ3NDEKTSV4RRFFQ69G5FAV"}`,
		`{"tool":"pay","arguments":{"payee_account":"ACCT-7777","amount":"1,200"},"justified_by":["01ARZ3NDEKTSV4RRFFQ69G5FAV"]}`,
		`{"entities":[{"name":"Bob","entityType":"person","observations":["likes tea"]}]}`,
		`{"body":"caf\u00e9 \ud83d\ude00","namespace":""}`, `{"body":"\ud800"}`, `{"limit":1e309}`,
	} {
		for t := range tools.Tools {
			if (t+i)%3 == 0 || i < 2 {
				f.Add(uint8(t), []byte(args))
			}
		}
	}
	f.Fuzz(func(t *testing.T, ti uint8, raw []byte) {
		tool := tools.Tools[int(ti)%len(tools.Tools)].Name
		var args any = string(raw)
		if json.Valid(raw) {
			args = json.RawMessage(raw)
		}
		ctx, cancel := context.WithTimeout(fx.ctx, 30*time.Second)
		defer cancel()
		if _, err := cl.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args}); ctx.Err() != nil {
			t.Fatalf("%s(%q) did not answer: %v", tool, raw, err)
		}
		if _, err := cl.cs.ListTools(ctx, nil); err != nil {
			t.Fatalf("after %s(%q) the session does not serve: %v", tool, raw, err)
		}
	})
}
