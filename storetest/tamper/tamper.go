// Package tamper is the suite that edits a store's database behind its
// back, as an insider with write access would, and checks that verify
// names each edit and that the server refuses a principal whose rights
// were edited. Both backends run it (sqlite and postgres TestTampering).
// It is apart from storetest because it drives the HTTP API, whose own
// tests use storetest.
package tamper

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/httpapi"
	"github.com/custody-mem/custody/storetest"
)

// Backend lets RunTampering edit a store's database behind the store's
// back, as an insider with write access to it would.
type Backend struct {
	// Open opens a fresh, empty store for one subtest.
	Open func(t *testing.T) custody.Store
	// Exec runs one SQL statement on st's database.
	Exec func(t *testing.T, st custody.Store, query string)
	// Postgres spells lists and byte strings PostgreSQL's way.
	Postgres bool
}

// list is a SQL literal of a principal's roles, channels or groups.
func (b Backend) list(vs ...string) string {
	if b.Postgres {
		return "'{" + strings.Join(vs, ",") + "}'"
	}
	j, _ := json.Marshal(vs)
	return "'" + string(j) + "'"
}

// blob is a SQL literal of bytes.
func (b Backend) blob(v []byte) string {
	if b.Postgres {
		return `'\x` + hex.EncodeToString(v) + `'::bytea`
	}
	return "X'" + hex.EncodeToString(v) + "'"
}

// Run edits what decides access (principals, policies,
// tombstones, receipts) directly in the database: verify must name each
// edit, and the server must refuse a principal whose rights were edited,
// while the untouched ones keep working.
func Run(t *testing.T, b Backend) {
	t.Run("Escalation", func(t *testing.T) { testEscalation(t, b) })
	t.Run("Principals", func(t *testing.T) { testPrincipalTampering(t, b) })
	t.Run("Decisions", func(t *testing.T) { testDecisionTampering(t, b) })
	t.Run("Sessions", func(t *testing.T) { testSessionTampering(t, b) })
	t.Run("Reevaluation", func(t *testing.T) { testReevaluationTampering(t, b) })
	t.Run("Lifecycle", func(t *testing.T) { testLifecycle(t, b) })
	t.Run("Pause", func(t *testing.T) { testPauseHTTP(t, b) })
	t.Run("Metadata", func(t *testing.T) { testMetadataHTTP(t, b) })
	t.Run("TenantLogs", func(t *testing.T) { testTenantLogTampering(t, b) })
	t.Run("Grants", func(t *testing.T) { testGrantTampering(t, b) })
	t.Run("Endorsements", func(t *testing.T) { testEndorsementTampering(t, b) })
}

// tamperEnv is a store, a service over it and an HTTP server in front.
type tamperEnv struct {
	t     *testing.T
	b     Backend
	ctx   context.Context
	store custody.Store
	svc   *custody.Service
	srv   *httptest.Server
	log   *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newTamperEnv(t *testing.T, b Backend) *tamperEnv {
	st := b.Open(t)
	svc := storetest.NewService(t, st, storetest.NewClock(storetest.Start))
	logs := &syncBuffer{}
	api := httpapi.New(svc, httpapi.Options{Logger: slog.New(slog.NewTextHandler(logs, nil)), RatePerSecond: -1})
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	return &tamperEnv{t: t, b: b, ctx: t.Context(), store: st, svc: svc, srv: srv, log: logs}
}

func (e *tamperEnv) exec(format string, args ...any) {
	e.t.Helper()
	e.b.Exec(e.t, e.store, fmt.Sprintf(format, args...))
}

func (e *tamperEnv) add(name string, roles []string, channels ...string) (*custody.Principal, string) {
	e.t.Helper()
	p, tok, err := e.svc.AddPrincipal(e.ctx, custody.PrincipalInput{Tenant: "acme", Name: name, Roles: roles, Channels: channels})
	if err != nil {
		e.t.Fatal(err)
	}
	return p, tok
}

// verify runs verify: it must pass when want is "", and otherwise report a
// difference naming every part of want.
func (e *tamperEnv) verify(want ...string) {
	e.t.Helper()
	_, err := e.svc.Verify(e.ctx, custody.VerifyOptions{})
	var d *custody.Difference
	switch {
	case len(want) == 0 && err != nil:
		e.t.Fatalf("verify of an untouched store: %v", err)
	case len(want) == 0:
	case !errors.As(err, &d):
		e.t.Fatalf("verify = %v; want a difference naming %q", err, want)
	default:
		for _, w := range want {
			if !strings.Contains(d.What, w) {
				e.t.Fatalf("verify = %q; want it to name %q", d.What, w)
			}
		}
	}
}

type answer struct {
	status int
	code   string
	body   string
}

func (e *tamperEnv) do(token, method, path string, body any) answer {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		j, _ := json.Marshal(body)
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequestWithContext(e.ctx, method, e.srv.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var eb httpapi.ErrorBody
	json.Unmarshal(raw, &eb)
	return answer{status: res.StatusCode, code: eb.Error.Code, body: string(raw)}
}

func (e *tamperEnv) expect(a answer, status int, code string) {
	e.t.Helper()
	if a.status != status || a.code != code {
		e.t.Fatalf("got %d %s; want %d %q", a.status, a.body, status, code)
	}
}
