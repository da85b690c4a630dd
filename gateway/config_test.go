package gateway_test

import (
	"strings"
	"testing"
	"time"

	"github.com/custody-mem/custody/gateway"
)

func TestParseAcceptsTheDocumentedShape(t *testing.T) {
	cfg, err := gateway.Parse([]byte(`{"upstreams": [
	  {"name": "bank", "channel": "tool:api", "command": ["node", "bank-server.mjs"], "actions": {"transfer": "send_money"}, "timeout": "5s"},
	  {"name": "files", "channel": "tool:file", "url": "http://127.0.0.1:9000/mcp", "headers": {"Authorization": "Bearer x"}}
	], "timeout": "30s", "max_result_bytes": 1000}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(cfg.Upstreams), 2; got != want {
		t.Fatalf("upstreams = %d, want %d", got, want)
	}
	if got, want := time.Duration(cfg.Upstreams[0].Timeout), 5*time.Second; got != want {
		t.Errorf("timeout = %v, want %v", got, want)
	}
	if got, want := cfg.Upstreams[0].Actions["transfer"], "send_money"; got != want {
		t.Errorf("actions[transfer] = %q, want %q", got, want)
	}
	if got, want := cfg.Upstreams[1].Headers["Authorization"], "Bearer x"; got != want {
		t.Errorf("header = %q, want %q", got, want)
	}
}

func TestParseRefusesBadFiles(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"not json", `upstreams:`, "not a gateway configuration"},
		{"trailing", `{"upstreams":[{"name":"a","channel":"tool:api","command":["x"]}]} {}`, "text after"},
		{"unknown field", `{"upstreams":[{"name":"a","channel":"tool:api","command":["x"],"chanel":"user"}]}`, `unknown field "chanel"`},
		{"no upstreams", `{"upstreams":[]}`, "no upstreams"},
		{"bad name", `{"upstreams":[{"name":"Bank_1","channel":"tool:api","command":["x"]}]}`, `name "Bank_1"`},
		{"no channel", `{"upstreams":[{"name":"a","command":["x"]}]}`, "no channel"},
		{"bad channel", `{"upstreams":[{"name":"a","channel":"email","command":["x"]}]}`, "channel"},
		{"trusted channel", `{"upstreams":[{"name":"a","channel":"user","command":["x"]}]}`, "use a tool:<name> channel"},
		{"import channel", `{"upstreams":[{"name":"a","channel":"import","command":["x"]}]}`, "use a tool:<name> channel"},
		{"both", `{"upstreams":[{"name":"a","channel":"tool:api","command":["x"],"url":"http://h/mcp"}]}`, `both "command" and "url"`},
		{"neither", `{"upstreams":[{"name":"a","channel":"tool:api"}]}`, `neither "command" nor "url"`},
		{"empty program", `{"upstreams":[{"name":"a","channel":"tool:api","command":[""]}]}`, "empty program"},
		{"bad url", `{"upstreams":[{"name":"a","channel":"tool:api","url":"ftp://h/x"}]}`, "http:// or https://"},
		{"headers on command", `{"upstreams":[{"name":"a","channel":"tool:api","command":["x"],"headers":{"A":"b"}}]}`, `"headers" are for a "url"`},
		{"env on url", `{"upstreams":[{"name":"a","channel":"tool:api","url":"http://h/mcp","env":{"A":"b"}}]}`, `"env" and "dir"`},
		{"header newline", `{"upstreams":[{"name":"a","channel":"tool:api","url":"http://h/mcp","headers":{"A":"b\r\nX: y"}}]}`, "line break"},
		{"header name", `{"upstreams":[{"name":"a","channel":"tool:api","url":"http://h/mcp","headers":{"A b":"c"}}]}`, "header name"},
		{"twice", `{"upstreams":[{"name":"a","channel":"tool:api","command":["x"]},{"name":"a","channel":"tool:api","command":["y"]}]}`, "configured twice"},
		{"bad timeout", `{"upstreams":[{"name":"a","channel":"tool:api","command":["x"],"timeout":"soon"}]}`, "Go duration"},
		{"numeric timeout", `{"timeout": 30, "upstreams":[{"name":"a","channel":"tool:api","command":["x"]}]}`, "a duration is a string"},
		{"empty action", `{"upstreams":[{"name":"a","channel":"tool:api","command":["x"],"actions":{"t":""}}]}`, "policy action name"},
		{"result limit", `{"max_result_bytes": 100000000, "upstreams":[{"name":"a","channel":"tool:api","command":["x"]}]}`, "max_result_bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := gateway.Parse([]byte(tc.in))
			if err == nil {
				t.Fatalf("Parse(%s) succeeded", tc.in)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
		})
	}
}

func TestLoadNamesTheFile(t *testing.T) {
	_, err := gateway.Load(t.TempDir() + "/missing.json")
	if err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Fatalf("Load of a missing file: %v", err)
	}
}

// FuzzParse: any bytes give a config or an error, never a panic, and a
// config that parses is valid by the rules Parse enforces.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"upstreams":[{"name":"bank","channel":"tool:api","command":["node","b.mjs"],"actions":{"transfer":"send_money"}}]}`))
	f.Add([]byte(`{"upstreams":[{"name":"files","channel":"tool:file","url":"http://127.0.0.1:9000/mcp","headers":{"Authorization":"Bearer x"}}],"timeout":"3s"}`))
	f.Add([]byte(`{"upstreams":[{"name":"a","channel":"tool:a","command":[""]}]}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		cfg, err := gateway.Parse(b)
		if err != nil {
			return
		}
		if len(cfg.Upstreams) == 0 {
			t.Fatal("a config without upstreams parsed")
		}
		for _, u := range cfg.Upstreams {
			if (len(u.Command) > 0) == (u.URL != "") {
				t.Fatalf("upstream %q has both or neither of command and url", u.Name)
			}
			if !strings.HasPrefix(u.Channel, "tool:") {
				t.Fatalf("upstream %q has channel %q", u.Name, u.Channel)
			}
		}
	})
}
