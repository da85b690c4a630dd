package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-mem/custody"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/tlog"
)

// env is a real server over a real SQLite file, reached over loopback.
type env struct {
	t     testing.TB
	ctx   context.Context
	svc   *custody.Service
	store *sqlite.Store
	api   *Server
	srv   *httptest.Server
}

func newEnv(t testing.TB, opts Options) *env {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	store, err := sqlite.Open(ctx, filepath.Join(dir, "c.db"))
	if err != nil {
		t.Fatalf("sqlite.Open: %v", err)
	}
	key, _, err := tlog.LoadOrCreateServerKey(filepath.Join(dir, "server.key"))
	if err != nil {
		t.Fatalf("LoadOrCreateServerKey: %v", err)
	}
	svc, err := custody.New(store, key, custody.Options{})
	if err != nil {
		t.Fatalf("custody.New: %v", err)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	api := New(svc, opts)
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(func() {
		srv.Close()
		store.Close()
	})
	return &env{t: t, ctx: ctx, svc: svc, store: store, api: api, srv: srv}
}

// principal creates a principal and returns its token.
func (e *env) principal(tenant, name string, roles []string, channels ...string) string {
	e.t.Helper()
	_, tok, err := e.svc.AddPrincipal(e.ctx, custody.PrincipalInput{Tenant: tenant, Name: name, Roles: roles, Channels: channels})
	if err != nil {
		e.t.Fatalf("AddPrincipal %s/%s: %v", tenant, name, err)
	}
	return tok
}

// resp is an answer, read whole.
type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) String() string { return string(r.body) }

// json decodes the body into a generic map.
func (r resp) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("answer %d is not a JSON object: %v: %s", r.status, err, r.body)
	}
	return m
}

// errCode is the error code of an error answer, or "".
func (r resp) errCode() string {
	var b ErrorBody
	if json.Unmarshal(r.body, &b) != nil {
		return ""
	}
	return b.Error.Code
}

// do sends a request. body is sent as is when it is a string or []byte,
// else as JSON; nil sends no body.
func (e *env) do(token, method, path string, body any) resp {
	e.t.Helper()
	return e.send(e.t, token, method, path, body)
}

// send is do reporting to t (inside fuzz targets and subtests).
func (e *env) send(t testing.TB, token, method, path string, body any) resp {
	t.Helper()
	var rd io.Reader
	ctype := ""
	switch b := body.(type) {
	case nil:
	case string:
		rd, ctype = strings.NewReader(b), "application/json"
	case []byte:
		rd, ctype = bytes.NewReader(b), "application/json"
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd, ctype = bytes.NewReader(j), "application/json"
	}
	req, err := http.NewRequestWithContext(e.ctx, method, e.srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", method, path, err)
	}
	return resp{status: res.StatusCode, header: res.Header, body: b}
}

// want fails unless r has status (and, if code is not "", that error code).
func want(t testing.TB, r resp, status int, code string) {
	t.Helper()
	if r.status != status || (code != "" && r.errCode() != code) {
		t.Fatalf("got %d %s, want %d %s", r.status, r.body, status, code)
	}
}

// count is how many records the tenant holds in any state, straight from
// the store.
func (e *env) count(tenant string) int {
	e.t.Helper()
	n := 0
	err := e.store.View(e.ctx, func(tx custody.Tx) error {
		return tx.ScanRecords(e.ctx, tenant, func(*custody.Record) error { n++; return nil })
	})
	if err != nil {
		e.t.Fatalf("ScanRecords: %v", err)
	}
	return n
}

// items returns the "items" of a list answer as maps.
func items(t testing.TB, r resp) []map[string]any {
	t.Helper()
	var v struct {
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("not a list answer: %v: %s", err, r.body)
	}
	return v.Items
}
