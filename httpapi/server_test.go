package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

func TestRateLimit(t *testing.T) {
	e := newEnv(t, Options{RatePerSecond: 0.01, RateBurst: 2})
	alice := e.principal("acme", "alice", []string{"user"})
	bob := e.principal("acme", "bob", []string{"user"})
	want(t, e.do(alice, "GET", "/v1/memories", nil), 200, "")
	want(t, e.do(alice, "GET", "/v1/memories", nil), 200, "")
	r := e.do(alice, "GET", "/v1/memories", nil)
	want(t, r, http.StatusTooManyRequests, "rate_limited")
	if n, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || n < 1 {
		t.Fatalf("Retry-After = %q", r.header.Get("Retry-After"))
	}
	// Buckets are per principal; public routes are not limited.
	want(t, e.do(bob, "GET", "/v1/memories", nil), 200, "")
	want(t, e.do("", "GET", "/healthz", nil), 200, "")
}

func TestRequestTimeoutReachesTheStore(t *testing.T) {
	e := newEnv(t, Options{RequestTimeout: time.Nanosecond})
	alice := e.principal("acme", "alice", []string{"user"})
	r := e.do(alice, "GET", "/v1/memories", nil)
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
		t.Fatalf("an expired request context answered %d %s, want 503 with Retry-After", r.status, r.body)
	}
}

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	e := newEnv(t, Options{Registry: reg})
	alice := e.principal("acme", "alice", []string{"user"})
	r := e.do(alice, "POST", "/v1/memories", MemoryRequest{Namespace: "n", Class: "fact", Body: "x", Channel: "user"})
	want(t, r, 201, "")
	id := r.json(t)["id"].(string)
	want(t, e.do(alice, "GET", "/v1/memories/"+id, nil), 200, "")
	want(t, e.do(alice, "GET", "/v1/memories/01ARZ3NDEKTSV4RRFFQ69G5FAV", nil), 404, "")
	want(t, e.do(alice, "POST", "/v1/gate", GateRequest{Action: "email.send"}), 200, "")
	want(t, e.do(alice, "GET", "/no/such/"+id, nil), 404, "")

	m := e.do("", "GET", "/metrics", nil)
	want(t, m, 200, "")
	text := m.String()
	for _, s := range []string{
		`custody_http_requests_total{code="201",method="POST",route="POST /v1/memories"} 1`,
		`custody_http_requests_total{code="404",method="GET",route="GET /v1/memories/{id}"} 1`,
		`custody_http_requests_total{code="404",method="GET",route="unmatched"} 1`,
		`custody_http_request_duration_seconds_count{route="GET /v1/memories/{id}"} 2`,
		`custody_admissions_total{channel="user",class="fact",state="admitted"} 1`,
		`custody_gate_decisions_total{action="email.send",decision="allow"} 1`,
	} {
		if !strings.Contains(text, s) {
			t.Errorf("metrics lack %s", s)
		}
	}
	if strings.Contains(text, id) {
		t.Errorf("a raw path became a label:\n%s", text)
	}
	// The registry given in Options holds the metrics.
	if mfs, err := reg.Gather(); err != nil || len(mfs) == 0 {
		t.Fatalf("Gather: %v, %d families", err, len(mfs))
	}
	// A second server on the same registry reuses the collectors.
	New(e.svc, Options{Registry: reg, Logger: slog.New(slog.DiscardHandler)})
}

// TestRequestLog serves in process, so the log line is complete when
// ServeHTTP returns.
func TestRequestLog(t *testing.T) {
	var buf bytes.Buffer
	e := newEnv(t, Options{})
	alice := e.principal("acme", "alice", []string{"user"})
	api := New(e.svc, Options{Logger: slog.New(slog.NewJSONHandler(&buf, nil)), Registry: prometheus.NewRegistry()})
	req := httptest.NewRequest("GET", "/v1/memories/01ARZ3NDEKTSV4RRFFQ69G5FAV", nil)
	req.Header.Set("Authorization", "Bearer "+alice)
	rec := httptest.NewRecorder()
	api.Handler().ServeHTTP(rec, req)
	if rec.Code != 404 {
		t.Fatalf("status %d", rec.Code)
	}
	var line map[string]any
	if err := json.Unmarshal(bytes.TrimSpace(buf.Bytes()), &line); err != nil {
		t.Fatalf("log line %q: %v", buf.Bytes(), err)
	}
	for k, v := range map[string]any{"msg": "request", "method": "GET", "route": "GET /v1/memories/{id}", "status": 404.0, "principal": "acme/alice"} {
		if line[k] != v {
			t.Errorf("log %s = %v, want %v", k, line[k], v)
		}
	}
	if _, ok := line["duration"]; !ok {
		t.Errorf("log line without duration: %v", line)
	}
}

func TestOpenAPIMatchesRoutes(t *testing.T) {
	e := newEnv(t, Options{})
	r := e.do("", "GET", "/v1/openapi.json", nil)
	want(t, r, 200, "")
	var doc struct {
		OpenAPI    string                                `json:"openapi"`
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas map[string]struct {
				Properties           map[string]map[string]any `json:"properties"`
				Required             []string                  `json:"required"`
				AdditionalProperties *bool                     `json:"additionalProperties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(r.body, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi = %q", doc.OpenAPI)
	}
	documented := map[string]bool{}
	for path, ops := range doc.Paths {
		for method := range ops {
			documented[strings.ToUpper(method)+" "+path] = true
		}
	}
	served := map[string]bool{}
	for _, rt := range e.api.routes {
		served[rt.pattern()] = true
		if !documented[rt.pattern()] {
			t.Errorf("route %s is served but not in the OpenAPI document", rt.pattern())
		}
	}
	concrete := regexp.MustCompile(`\{[^}]+\}`)
	for p := range documented {
		if !served[p] {
			t.Errorf("%s is documented but not in the route table", p)
		}
		method, path, _ := strings.Cut(p, " ")
		req := httptest.NewRequest(method, concrete.ReplaceAllString(path, "01ARZ3NDEKTSV4RRFFQ69G5FAV"), nil)
		if _, pattern := e.api.mux.Handler(req); pattern != p {
			t.Errorf("%s is documented but the mux routes it to %q", p, pattern)
		}
	}
	mr := doc.Components.Schemas["MemoryRequest"]
	for _, f := range []string{"namespace", "key", "class", "body", "channel", "subject", "audience", "expires_at", "session", "derived_from", "source_ref"} {
		if _, ok := mr.Properties[f]; !ok {
			t.Errorf("MemoryRequest schema lacks %s", f)
		}
	}
	for _, f := range []string{"state", "authority", "owner"} {
		if _, ok := mr.Properties[f]; ok {
			t.Errorf("MemoryRequest schema documents control field %s", f)
		}
	}
	if mr.AdditionalProperties == nil || *mr.AdditionalProperties {
		t.Errorf("MemoryRequest schema allows additional properties")
	}
	if got := fmt.Sprint(doc.Components.Schemas["Record"].Properties["authority"]["type"]); got != "string" {
		t.Errorf("Record.authority is documented as %s, want string", got)
	}
	if !strings.Contains(string(r.body), `"bearer"`) {
		t.Errorf("no bearer security scheme")
	}
}
