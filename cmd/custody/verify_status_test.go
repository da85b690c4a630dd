package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/httpapi"
)

// custody verify records its outcome beside the checkpoint file, and the
// server reports it at GET /v1/log/status with the checkpoint and its
// verifier key: first a pass, then, after a record was rewritten behind
// the store's back, the failure naming the record.
func TestVerifyOutcomeIsReported(t *testing.T) {
	ctx := t.Context()
	sf := storeWithSummary(t)
	calls := 0
	status := func() httpapi.LogStatusResponse {
		t.Helper()
		calls++
		svc, st, err := sf.open(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		_, token, err := svc.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: fmt.Sprintf("rita%d", calls), Roles: []string{"reviewer"}})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(httpapi.New(svc, httpapi.Options{Logger: slog.New(slog.DiscardHandler)}).Handler())
		defer srv.Close()
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/v1/log/status", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out httpapi.LogStatusResponse
		if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != 200 {
			t.Fatalf("GET /v1/log/status: %d, %v", res.StatusCode, err)
		}
		vkey, _ := svc.VerifierKey("acme")
		if out.VerifierKey != vkey || out.Size == 0 || !strings.Contains(out.Checkpoint, "\n\n— ") {
			t.Fatalf("log status %+v: want the checkpoint and its key %s", out, vkey)
		}
		return out
	}
	if got := status(); got.LastVerify != nil {
		t.Fatalf("before any verify the status says %+v; want no outcome", got.LastVerify)
	}

	var out, errOut bytes.Buffer
	if err := runVerify(ctx, []string{"--db", sf.db}, &out, &errOut); err != nil {
		t.Fatalf("verify: %v", err)
	}
	got := status().LastVerify
	if got == nil || !got.OK || got.Entries == 0 || got.Problem != "" || got.At.IsZero() {
		t.Fatalf("after a passing verify the status says %+v", got)
	}

	behindItsBack(t, sf, `UPDATE records SET body = 'rewritten' WHERE body = 'summary'`)
	if err := runVerify(ctx, []string{"--db", sf.db}, &out, &errOut); err == nil {
		t.Fatal("verify passed on a rewritten record")
	}
	got = status().LastVerify
	if got == nil || got.OK || !strings.Contains(got.Problem, "does not match the hash in the log") {
		t.Fatalf("after a failing verify the status says %+v; want the failure and what it found", got)
	}
}
