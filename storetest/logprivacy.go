package storetest

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/tlog"
)

// RunHTTP runs the part of the contract suite that goes through the HTTP
// API (which this package cannot import: the API's own tests import it),
// one parallel subtest per behaviour, each on its own store. handler is
// the API over a service, httpapi.New(svc, opts).Handler().
func RunHTTP(t *testing.T, open func(t *testing.T) custody.Store, handler func(*custody.Service) http.Handler) {
	tests := []struct {
		name string
		fn   func(t *testing.T, a *apiEnv)
	}{
		{"LogPrivacy", testLogPrivacy},
		{"ForgetHTTP", testForgetHTTP},
		{"ImpactHTTP", testImpactHTTP},
		{"ImpactCitationHTTP", testImpactCitationHTTP},
		{"TilesHTTP", testTilesHTTP},
		{"GateSpellingsHTTP", testGateSpellingsHTTP},
		{"GateAmountsHTTP", testGateAmountsHTTP},
		{"GateFieldsHTTP", testGateFieldsHTTP},
		{"GateEmailSpellingsHTTP", testGateEmailSpellingsHTTP},
		{"EndorseHTTP", testEndorseHTTP},
		{"GateBoundsHTTP", testGateBoundsHTTP},
		{"LeafLimitsHTTP", testLeafLimitsHTTP},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, open)
			srv := httptest.NewServer(handler(e.svc))
			t.Cleanup(srv.Close)
			tc.fn(t, &apiEnv{env: e, srv: srv, tokens: map[string]string{}, tenants: map[string]string{}})
		})
	}
}

// apiEnv is the HTTP API over a subtest's service, with tokens by name.
type apiEnv struct {
	*env
	srv     *httptest.Server
	tokens  map[string]string
	tenants map[string]string // by principal name
}

// tenantOf is the tenant of the principal name.
func (a *apiEnv) tenantOf(name string) string { return a.tenants[name] }

// logEntry is an entry of GET /v1/log/entries, as a client decodes it.
type logEntry struct {
	Index      uint64            `json:"index"`
	LeafHash   string            `json:"leaf_hash"`
	Leaf       string            `json:"leaf"`
	Tenant     string            `json:"tenant"`
	RecordID   string            `json:"record_id"`
	RecordIDs  []string          `json:"record_ids"`
	Transition string            `json:"transition"`
	BodyHash   string            `json:"body_hash"`
	Actor      string            `json:"actor"`
	Time       *time.Time        `json:"time"`
	Details    map[string]string `json:"details"`
	Signature  string            `json:"signature"`
}

func (le logEntry) redacted() bool { return le.Leaf == "" }

// hash is the leaf hash, checked against the leaf when there is one.
func (le logEntry) hash() ([]byte, error) {
	h, err := base64.StdEncoding.DecodeString(le.LeafHash)
	if err != nil || len(h) != sha256.Size {
		return nil, fmt.Errorf("entry %d: leaf_hash %q", le.Index, le.LeafHash)
	}
	if le.redacted() {
		return h, nil
	}
	leaf, err := base64.StdEncoding.DecodeString(le.Leaf)
	if err != nil || !bytes.Equal(tlog.LeafHash(leaf), h) {
		return nil, errors.New("the leaf does not hash to leaf_hash")
	}
	return h, nil
}

// request bodies, as JSON.
type (
	memoryRequest struct {
		Namespace   string            `json:"namespace"`
		Key         string            `json:"key,omitempty"`
		Class       string            `json:"class"`
		Body        string            `json:"body"`
		Channel     string            `json:"channel"`
		Subject     string            `json:"subject,omitempty"`
		Audience    string            `json:"audience,omitempty"`
		DerivedFrom []custody.Edge    `json:"derived_from,omitempty"`
		SourceRef   string            `json:"source_ref,omitempty"`
		Metadata    map[string]string `json:"metadata,omitempty"`
	}
	proofResponse struct {
		Hashes []string `json:"hashes"`
	}
)

// add creates the principal tenant/name and keeps its token under name.
func (a *apiEnv) add(tenant, name string, roles []string, channels ...string) {
	a.t.Helper()
	_, tok, err := a.svc.AddPrincipal(a.ctx, custody.PrincipalInput{Tenant: tenant, Name: name, Roles: roles, Channels: channels})
	if err != nil {
		a.t.Fatalf("add principal %s/%s: %v", tenant, name, err)
	}
	a.tokens[name], a.tenants[name] = tok, tenant
}

// call sends a JSON request as who, wants status, decodes the answer into
// out (if not nil) and returns the raw answer.
func (a *apiEnv) call(who, method, path string, body any, status int, out any) []byte {
	a.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			a.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(a.ctx, method, a.srv.URL+path, rd)
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+a.tokens[who])
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := a.srv.Client().Do(req)
	if err != nil {
		a.t.Fatalf("%s %s as %s: %v", method, path, who, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		a.t.Fatal(err)
	}
	if res.StatusCode != status {
		a.t.Fatalf("%s %s as %s = %d %s, want %d", method, path, who, res.StatusCode, raw, status)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			a.t.Fatalf("%s %s: %v: %s", method, path, err, raw)
		}
	}
	return raw
}

// remember writes as who and returns the new record's id.
func (a *apiEnv) remember(who string, m memoryRequest, status int) string {
	a.t.Helper()
	var d custody.Decision
	a.call(who, "POST", "/v1/memories", m, status, &d)
	return d.ID
}

// checkpoint fetches and opens the log's checkpoint as who.
func (a *apiEnv) checkpoint(who string) tlog.Checkpoint {
	a.t.Helper()
	note := a.call(who, "GET", "/v1/log/checkpoint", nil, 200, nil)
	cp, err := a.svc.OpenCheckpoint(a.tenantOf(who), note)
	if err != nil {
		a.t.Fatalf("checkpoint %q: %v", note, err)
	}
	return cp
}

// entries reads the log [0, size) as who, by index, and the raw answer.
func (a *apiEnv) entries(who string, size uint64) (map[uint64]logEntry, string) {
	a.t.Helper()
	var resp struct {
		Entries []logEntry `json:"entries"`
	}
	raw := a.call(who, "GET", fmt.Sprintf("/v1/log/entries?start=0&end=%d", size), nil, 200, &resp)
	if uint64(len(resp.Entries)) != size {
		a.t.Fatalf("%s got %d entries of %d", who, len(resp.Entries), size)
	}
	out := map[uint64]logEntry{}
	for _, le := range resp.Entries {
		out[le.Index] = le
	}
	return out, string(raw)
}

// proveInclusion checks, as who, that the entry is in the tree of cp by
// its leaf hash alone, as any client can whether or not it reads the leaf.
func (a *apiEnv) proveInclusion(who string, le logEntry, cp tlog.Checkpoint) {
	a.t.Helper()
	h, err := le.hash()
	if err != nil {
		a.t.Fatalf("%s: %v", who, err)
	}
	var p proofResponse
	a.call(who, "GET", fmt.Sprintf("/v1/log/proof/inclusion?index=%d&size=%d", le.Index, cp.Size), nil, 200, &p)
	if err := tlog.VerifyInclusion(h, le.Index, cp.Size, unbase64(a.t, p.Hashes), cp.Root); err != nil {
		a.t.Fatalf("%s: inclusion of entry %d in %d: %v", who, le.Index, cp.Size, err)
	}
}

func unbase64(t *testing.T, ss []string) [][]byte {
	t.Helper()
	out := make([][]byte, len(ss))
	for i, s := range ss {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = b
	}
	return out
}

// wantRedacted fails unless le shows nothing but its index and leaf hash,
// the same leaf hash as full (someone's full view of the same entry).
func wantRedacted(t *testing.T, who string, le, full logEntry) {
	t.Helper()
	if !le.redacted() || le.Tenant != "" || le.RecordID != "" || le.RecordIDs != nil || le.Transition != "" ||
		le.Details != nil || le.BodyHash != "" || le.Actor != "" || le.Signature != "" || le.Time != nil {
		t.Errorf("%s reads entry %d (%s of %s): %+v", who, le.Index, full.Transition, full.RecordID, le)
	}
	if le.LeafHash == "" || le.LeafHash != full.LeafHash {
		t.Errorf("%s: entry %d has leaf hash %q, the full entry %q", who, le.Index, le.LeafHash, full.LeafHash)
	}
}

// wantFull fails unless le is the decoded entry with its leaf bytes.
func wantFull(t *testing.T, who string, le, full logEntry) {
	t.Helper()
	if le.redacted() || le.Tenant != full.Tenant || le.Transition != full.Transition || le.RecordID != full.RecordID || le.Leaf != full.Leaf {
		t.Errorf("%s does not read entry %d (%s of %s) in full: %+v", who, le.Index, full.Transition, full.RecordID, le)
	}
	if _, err := le.hash(); err != nil {
		t.Errorf("%s: %v", who, err)
	}
}

// The log shows each caller only what it may read (design §9): bob gets
// the index and leaf hash of alice's owner-only records and nothing of
// their owner, namespace, key, source, parents, or body hash, and still
// proves their inclusion and the log's consistency; alice reads her own
// entries in full; the records bob may retrieve, his own, and the policy
// he reads in full; reviewers the queue; admins and auditors everything of
// their tenant and nothing of another's. Bodies are committed with a
// per-record salt, so the same short body in two records leaves two
// unrelated hashes, neither its plain SHA-256.
func testLogPrivacy(t *testing.T, a *apiEnv) {
	e := a.env
	a.add("acme", "alice", []string{"user"})
	a.add("acme", "bob", []string{"user"})
	a.add("acme", "rev", []string{"reviewer"})
	a.add("acme", "po", []string{"policy_owner"})
	a.add("acme", "boss", []string{"admin"})
	a.add("acme", "audit", []string{"auditor"})
	a.add("acme", "harness", []string{"agent"}, "tool:email")
	a.add("other", "carol", []string{"user"})
	cp0 := a.checkpoint("bob")

	secret := a.remember("alice", memoryRequest{Namespace: "vault", Key: "card_pin", Class: "fact", Body: "1234",
		Channel: "user", SourceRef: "sms:from-the-bank"}, 201)
	derived := a.remember("alice", memoryRequest{Namespace: "vault", Class: "episode", Body: "noted the card pin",
		Channel: "user", DerivedFrom: []custody.Edge{{ID: secret, Weight: 1}}}, 201)
	held := a.remember("harness", memoryRequest{Subject: "alice", Namespace: "inbox", Class: "fact", Body: "pay ACCT-9",
		Channel: "tool:email", SourceRef: "email:77"}, 202)
	shared := a.remember("alice", memoryRequest{Namespace: "team", Class: "fact", Body: "the office opens at nine",
		Channel: "user", Audience: "tenant"}, 201)
	bobs := a.remember("bob", memoryRequest{Namespace: "mine", Class: "fact", Body: "1234", Channel: "user"}, 201)
	a.call("po", "PUT", "/v1/policy", map[string]string{"text": string(PolicyText())}, 200, nil)
	a.call("alice", "POST", "/v1/gate", map[string]any{"action": "send_money", "args": map[string]any{"to": "ACCT-1"},
		"justification": []string{secret}}, 200, nil)
	var sess struct {
		ID string `json:"id"`
	}
	a.call("alice", "POST", "/v1/sessions", map[string]any{}, 201, &sess)
	a.call("alice", "POST", "/v1/sessions/"+sess.ID+"/observations", map[string]any{"channel": "tool:email",
		"text": "an email for alice", "source_ref": "email:for-alice-only"}, 200, nil)
	a.remember("carol", memoryRequest{Namespace: "n", Class: "fact", Body: "carol's", Channel: "user"}, 201)
	cp := a.checkpoint("bob")

	// carol's tenant has a log of its own: its two entries (her principal's,
	// redacted to her, and her record's), under its own origin; acme's log
	// holds none of them.
	carolCP := a.checkpoint("carol")
	if carolCP.Size != 2 || carolCP.Origin != e.svc.LogOrigin("other") || cp.Origin != e.svc.LogOrigin("acme") || bytes.Equal(carolCP.Root, cp.Root) {
		t.Errorf("carol's checkpoint is %d entries of %q, acme's %d of %q; want 2 of other's log, and another root", carolCP.Size, carolCP.Origin, cp.Size, cp.Origin)
	}
	carol, _ := a.entries("carol", carolCP.Size)
	if le := carol[1]; le.redacted() || le.Tenant != "other" || le.Details["owner"] != "carol" {
		t.Errorf("carol's entry 1: %+v, want her record's entry in full", le)
	}

	all, _ := a.entries("boss", cp.Size) // the admin's view is the whole tenant
	byRecord := map[string][]logEntry{}
	var principals, policies, gates, sessions []logEntry
	for i := range cp.Size {
		le := all[i]
		if le.Tenant == "other" {
			t.Errorf("the admin of acme reads entry %d of tenant other", i)
		}
		switch {
		case le.redacted():
			continue
		case le.Transition == "principal":
			principals = append(principals, le)
		case le.Transition == "policy":
			policies = append(policies, le)
		case le.Transition == "gate":
			gates = append(gates, le)
		case le.Transition == custody.TransitionSession || le.Transition == custody.TransitionObservation:
			sessions = append(sessions, le)
		case le.RecordID != "":
			byRecord[le.RecordID] = append(byRecord[le.RecordID], le)
		}
	}
	if len(sessions) != 2 {
		t.Errorf("the admin reads %d session and observation entries; want 2", len(sessions))
	}
	if len(principals) != 7 || len(policies) != 1 || len(gates) != 1 || len(byRecord[secret]) != 1 || len(byRecord[held]) != 1 || len(byRecord[shared]) != 1 {
		t.Fatalf("the admin reads %d principal, %d policy, %d gate entries and %d, %d, %d entries of the records; want 7, 1, 1, 1, 1, 1",
			len(principals), len(policies), len(gates), len(byRecord[secret]), len(byRecord[held]), len(byRecord[shared]))
	}
	if got := byRecord[secret][0].Details; got["owner"] != "alice" || got["namespace"] != "vault" || got["key"] != "card_pin" || got["source_ref"] != "sms:from-the-bank" {
		t.Errorf("the admin's view of the secret's entry lacks its fields: %v", got)
	}
	auditor, _ := a.entries("audit", cp.Size)
	for i := range cp.Size {
		if all[i].redacted() {
			wantRedacted(t, "the auditor", auditor[i], all[i])
		} else {
			wantFull(t, "the auditor", auditor[i], all[i])
		}
	}

	bob, raw := a.entries("bob", cp.Size)
	for _, secretText := range []string{"vault", "card_pin", "sms:from-the-bank", secret, derived, held, "inbox", "email:77", "send_money", "harness", sess.ID, "email:for-alice-only"} {
		if strings.Contains(raw, secretText) {
			t.Errorf("bob's log entries contain %q", secretText)
		}
	}
	for _, id := range []string{secret, derived, held} {
		for _, full := range byRecord[id] {
			wantRedacted(t, "bob", bob[full.Index], full)
			a.proveInclusion("bob", bob[full.Index], cp)
		}
	}
	for _, full := range append(append(principals, gates...), sessions...) {
		wantRedacted(t, "bob", bob[full.Index], full)
	}
	for _, full := range append(append(byRecord[bobs], byRecord[shared]...), policies...) {
		wantFull(t, "bob", bob[full.Index], full)
		a.proveInclusion("bob", bob[full.Index], cp)
	}
	var cons proofResponse
	a.call("bob", "GET", fmt.Sprintf("/v1/log/proof/consistency?from=%d&to=%d", cp0.Size, cp.Size), nil, 200, &cons)
	if err := tlog.VerifyConsistency(cp0.Size, cp.Size, unbase64(t, cons.Hashes), cp0.Root, cp.Root); err != nil {
		t.Errorf("bob's consistency proof: %v", err)
	}

	alice, _ := a.entries("alice", cp.Size)
	for _, full := range append(append(append(append(byRecord[secret], byRecord[derived]...), byRecord[held]...), gates...), sessions...) {
		wantFull(t, "alice", alice[full.Index], full)
		a.proveInclusion("alice", alice[full.Index], cp)
	}
	if p := alice[byRecord[derived][0].Index].Details["parents"]; p != secret+"=1" {
		t.Errorf("alice reads her derived record's parents as %q, want %s=1", p, secret)
	}
	for _, full := range append(byRecord[bobs], principals...) {
		wantRedacted(t, "alice", alice[full.Index], full)
	}

	rev, _ := a.entries("rev", cp.Size)
	wantFull(t, "the reviewer", rev[byRecord[held][0].Index], byRecord[held][0])
	wantRedacted(t, "the reviewer", rev[byRecord[secret][0].Index], byRecord[secret][0])

	// The salted commitment: neither the plain hash of the body nor the
	// hash of the same body in bob's record, but HMAC-SHA256 under the
	// record's own salt, which the log never shows.
	plain := sha256.Sum256([]byte("1234"))
	got := alice[byRecord[secret][0].Index].BodyHash
	if got == "" || got == base64.StdEncoding.EncodeToString(plain[:]) || got == bob[byRecord[bobs][0].Index].BodyHash {
		t.Errorf("the log's hash of the body 1234 is %q: plain SHA-256 %v, the same as bob's record %v", got,
			got == base64.StdEncoding.EncodeToString(plain[:]), got == bob[byRecord[bobs][0].Index].BodyHash)
	}
	salt := e.record("acme", secret).Salt
	m := hmac.New(sha256.New, salt)
	m.Write([]byte("1234"))
	if len(salt) != custody.SaltSize || got != base64.StdEncoding.EncodeToString(m.Sum(nil)) {
		t.Errorf("the log's hash of the body is not HMAC-SHA256 under the record's %d-byte salt", len(salt))
	}
	if strings.Contains(raw, base64.StdEncoding.EncodeToString(salt)) {
		t.Error("the log shows a record's salt")
	}

	// A cascade's entry is read by who may read every record it names.
	a.call("rev", "POST", "/v1/memories/"+secret+"/quarantine", struct{}{}, 200, nil)
	cp2 := a.checkpoint("alice")
	boss2, _ := a.entries("boss", cp2.Size)
	alice2, _ := a.entries("alice", cp2.Size)
	bob2, _ := a.entries("bob", cp2.Size)
	suspends := 0
	for i := cp.Size; i < cp2.Size; i++ {
		if boss2[i].Transition == "suspend" {
			suspends++
			wantFull(t, "alice", alice2[i], boss2[i])
			wantRedacted(t, "bob", bob2[i], boss2[i])
		}
	}
	if suspends != 1 {
		t.Errorf("%d suspend entries after quarantining the secret, want 1", suspends)
	}
	if _, err := e.svc.Verify(e.ctx, custody.VerifyOptions{}); err != nil {
		t.Errorf("verify: %v", err)
	}
}
