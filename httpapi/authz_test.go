package httpapi

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/custody-mem/custody"
)

// absentID is a well-formed id that no record has.
const absentID = "01ARZ3NDEKTSV4RRFFQ69G5FAV"

// who is a caller in the matrix.
type who struct {
	name, token, subject, channel string
	forbidden                     []string // secrets this caller must never see
}

// world is two tenants whose names share a prefix, each with a user named
// alice, and records of each kind carrying secret bodies.
type world struct {
	e                *env
	acme, corp       map[string]string // kind -> id: plain, quarantined, pending, session
	acmeSec, corpSec []string
	alice, bob       who
	harness, rita    who
	calice, mharness who
	mrita            who
}

func newWorld(t *testing.T) *world {
	e := newEnv(t, Options{})
	w := &world{e: e}
	seed := func(tenant, tag string) (map[string]string, []string, map[string]string) {
		tok := map[string]string{
			"alice":   e.principal(tenant, "alice", []string{"user"}),
			"harness": e.principal(tenant, "harness", []string{"agent"}, "agent", "tool:email"),
			"rita":    e.principal(tenant, "rita", []string{"reviewer"}),
		}
		ids := map[string]string{}
		sec := []string{"SECRET-" + tag + "-plain", "SECRET-" + tag + "-quarantined", "SECRET-" + tag + "-old", "SECRET-" + tag + "-pending"}
		post := func(token string, m MemoryRequest, status int) string {
			r := e.do(token, "POST", "/v1/memories", m)
			want(t, r, status, "")
			return r.json(t)["id"].(string)
		}
		ids["plain"] = post(tok["alice"], MemoryRequest{Namespace: "notes", Key: "diary", Class: "fact", Body: sec[0], Channel: "user"}, 201)
		ids["quarantined"] = post(tok["harness"], MemoryRequest{Namespace: "notes", Key: "diary", Class: "fact", Body: sec[1], Channel: "tool:email", Subject: "alice"}, 202)
		post(tok["alice"], MemoryRequest{Namespace: "profile", Key: "payee_account", Class: "fact", Body: sec[2], Channel: "user"}, 201)
		ids["pending"] = post(tok["alice"], MemoryRequest{Namespace: "profile", Key: "payee_account", Class: "fact", Body: sec[3], Channel: "user"}, 202)
		r := e.do(tok["harness"], "POST", "/v1/sessions", SessionRequest{Subject: "alice"})
		want(t, r, 201, "")
		ids["session"] = r.json(t)["id"].(string)
		return ids, sec, tok
	}
	var at, ct map[string]string
	w.acme, w.acmeSec, at = seed("acme", "ACME")
	w.corp, w.corpSec, ct = seed("acme-corp", "CORP")
	bob := e.principal("acme", "bob", []string{"user"})
	e.principal("acme-corp", "mallory", []string{"user"})

	w.alice = who{name: "acme/alice", token: at["alice"], channel: "user", forbidden: w.corpSec}
	w.bob = who{name: "acme/bob", token: bob, channel: "user", forbidden: append(append([]string{}, w.acmeSec...), w.corpSec...)}
	w.harness = who{name: "acme/harness", token: at["harness"], subject: "alice", channel: "agent", forbidden: w.corpSec}
	w.rita = who{name: "acme/rita", token: at["rita"], channel: "user", forbidden: w.corpSec}
	w.calice = who{name: "acme-corp/alice", token: ct["alice"], channel: "user", forbidden: w.acmeSec}
	w.mharness = who{name: "acme-corp/harness", token: ct["harness"], subject: "alice", channel: "agent", forbidden: w.acmeSec}
	w.mrita = who{name: "acme-corp/rita", token: ct["rita"], channel: "user", forbidden: w.acmeSec}
	return w
}

// probe is one authenticated route exercised with a target id: where the id
// goes and what kind of record it names.
type probe struct {
	kind string // plain, quarantined, pending, session, or "" (no target)
	path string // the path; {id} is replaced by the target
	body func(c who, id string) any
	// subjectless routes answer about the token itself: an agent may
	// name no subject (any subject it names is still checked).
	subjectless bool
}

func probes() map[string]probe {
	noBody := func(who, string) any { return nil }
	return map[string]probe{
		"POST /v1/memories": {kind: "plain", path: "/v1/memories", body: func(c who, id string) any {
			return MemoryRequest{Namespace: "probe", Class: "episode", Body: "derived probe", Channel: c.channel,
				DerivedFrom: []custody.Edge{{ID: id, Weight: 1}}}
		}},
		"POST /v1/memories/batch": {kind: "plain", path: "/v1/memories/batch", body: func(c who, id string) any {
			return BatchRequest{Items: []MemoryRequest{{Namespace: "probe", Class: "episode", Body: "derived probe", Channel: c.channel,
				DerivedFrom: []custody.Edge{{ID: id, Weight: 1}}}}}
		}},
		"GET /v1/memories":                    {path: "/v1/memories", body: noBody},
		"GET /v1/memories/{id}":               {kind: "plain", path: "/v1/memories/{id}", body: noBody},
		"GET /v1/memories/{id}/history":       {kind: "plain", path: "/v1/memories/{id}/history", body: noBody},
		"GET /v1/memories/{id}/lineage":       {kind: "plain", path: "/v1/memories/{id}/lineage", body: noBody},
		"GET /v1/memories/{id}/impact":        {kind: "plain", path: "/v1/memories/{id}/impact", body: noBody},
		"POST /v1/memories/{id}/confirm":      {kind: "pending", path: "/v1/memories/{id}/confirm", body: noBody},
		"POST /v1/memories/{id}/quarantine":   {kind: "plain", path: "/v1/memories/{id}/quarantine", body: func(who, string) any { return QuarantineRequest{Reason: "probe"} }},
		"POST /v1/memories/{id}/retire":       {kind: "plain", path: "/v1/memories/{id}/retire", body: func(who, string) any { return RetireRequest{Erase: true} }},
		"POST /v1/memories/{id}/rebuild":      {kind: "plain", path: "/v1/memories/{id}/rebuild", body: noBody},
		"POST /v1/search":                     {path: "/v1/search", body: func(who, string) any { return SearchRequest{Query: "SECRET payee diary"} }},
		"GET /v1/review":                      {path: "/v1/review", body: noBody},
		"POST /v1/review/{id}/approve":        {kind: "quarantined", path: "/v1/review/{id}/approve", body: noBody},
		"POST /v1/review/{id}/reject":         {kind: "quarantined", path: "/v1/review/{id}/reject", body: func(who, string) any { return RejectRequest{Reason: "probe"} }},
		"POST /v1/review/reevaluate":          {path: "/v1/review/reevaluate", body: noBody},
		"POST /v1/sessions":                   {path: "/v1/sessions", body: noBody},
		"POST /v1/sessions/{id}/observations": {kind: "session", path: "/v1/sessions/{id}/observations", body: func(who, string) any { return ObservationRequest{Channel: "tool:email", Text: "probe"} }},
		"POST /v1/sessions/{id}/endorse": {kind: "session", path: "/v1/sessions/{id}/endorse", body: func(who, string) any {
			return EndorseRequest{SourceRef: "file:probe.txt", Actions: []string{"update_user_info"}}
		}},
		"POST /v1/gate": {kind: "plain", path: "/v1/gate", body: func(c who, id string) any {
			return GateRequest{Action: "payments.send", Args: map[string]any{"to": "ACCT-0001"}, Justification: []string{id}}
		}},
		"POST /v1/gate/confirm":         {path: "/v1/gate/confirm", body: func(who, string) any { return GateConfirmRequest{Action: "payments.send"} }},
		"GET /v1/policy":                {path: "/v1/policy", body: noBody},
		"GET /v1/log/checkpoint":        {path: "/v1/log/checkpoint", body: noBody},
		"GET /v1/log/status":            {path: "/v1/log/status", body: noBody},
		"GET /v1/log/proof/inclusion":   {path: "/v1/log/proof/inclusion?index=0&size=2", body: noBody},
		"GET /v1/log/proof/consistency": {path: "/v1/log/proof/consistency?from=1&to=2", body: noBody},
		"GET /v1/log/entries":           {path: "/v1/log/entries?start=0&end=1000", body: noBody},
		"POST /v1/log/proofs":           {path: "/v1/log/proofs", body: func(who, string) any { return InclusionProofsRequest{Indexes: []uint64{0, 1}, Size: 2} }},
		"PUT /v1/policy":                {path: "/v1/policy", body: func(who, string) any { return PolicyRequest{Text: string(custody.DefaultPolicyText())} }},
		"GET /v1/principals":            {path: "/v1/principals", body: noBody},
		"GET /v1/principals/{name}":     {path: "/v1/principals/alice", body: noBody},
		"PATCH /v1/principals/{name}": {path: "/v1/principals/alice", body: func(who, string) any {
			return PrincipalUpdateRequest{Roles: []string{"user", "admin"}}
		}},
		"POST /v1/principals/{name}/rotate": {path: "/v1/principals/alice/rotate", body: noBody},
		"POST /v1/principals/{name}/revoke": {path: "/v1/principals/alice/revoke", body: noBody},
		"POST /v1/pauses":                   {path: "/v1/pauses", body: func(who, string) any { return PauseRequest{Writer: "nobody", Reason: "probe"} }},
		"GET /v1/pauses":                    {path: "/v1/pauses", body: noBody},
		"GET /v1/namespaces":                {path: "/v1/namespaces?prefix=notes", body: noBody},
		"DELETE /v1/memories/{id}":          {kind: "plain", path: "/v1/memories/{id}?erase=true", body: noBody},
		"POST /v1/subjects/{name}/erase":    {path: "/v1/subjects/nobody/erase", body: noBody},
		"DELETE /v1/pauses/{id}":            {path: "/v1/pauses/" + absentID, body: noBody},
		"GET /v1/review/{id}/versions":      {kind: "quarantined", path: "/v1/review/{id}/versions", body: noBody},
		"GET /v1/decisions":                 {path: "/v1/decisions", body: noBody},
		"GET /v1/confirmations":             {path: "/v1/confirmations", body: noBody},
		"GET /v1/held":                      {path: "/v1/held", body: noBody},
		"GET /v1/me":                        {path: "/v1/me", body: noBody, subjectless: true},
	}
}

// call sends the probe of pattern as c with target id; subject overrides
// the caller's own subject when not nil.
func (w *world) call(pattern string, p probe, c who, id string, subject *string) resp {
	method, _, _ := strings.Cut(pattern, " ")
	path := strings.ReplaceAll(p.path, "{id}", id)
	sub := c.subject
	if subject != nil {
		sub = *subject
	}
	if sub != "" {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		path += sep + "subject=" + sub
	}
	return w.e.do(c.token, method, path, p.body(c, id))
}

// normalize hides what legitimately differs between two answers that must
// otherwise be identical: the target id the caller sent and log indexes.
var logIndexRE = regexp.MustCompile(`"log_index":\d+`)

func normalize(b []byte, ids ...string) string {
	s := string(b)
	for _, id := range ids {
		s = strings.ReplaceAll(s, id, "<ID>")
	}
	return logIndexRE.ReplaceAllString(s, `"log_index":0`)
}

func TestAuthorizationMatrix(t *testing.T) {
	w := newWorld(t)
	ps := probes()
	var authed []route
	for _, rt := range w.e.api.routes {
		if rt.public {
			continue
		}
		if _, ok := ps[rt.pattern()]; !ok {
			t.Errorf("route %s has no probe in the authorization matrix", rt.pattern())
			continue
		}
		authed = append(authed, rt)
	}
	var seen []resp
	record := func(c who, r resp) {
		t.Helper()
		for _, s := range c.forbidden {
			if strings.Contains(string(r.body), s) {
				t.Errorf("%s saw %q: %s", c.name, s, r.body)
			}
		}
		seen = append(seen, r)
	}

	for _, rt := range authed {
		pat := rt.pattern()
		p := ps[pat]
		t.Run(pat, func(t *testing.T) {
			method, _, _ := strings.Cut(pat, " ")
			path := strings.ReplaceAll(p.path, "{id}", w.acme[p.kind])

			// No token, and a token nobody holds: 401 with a Bearer challenge.
			for _, tok := range []string{"", "cst_not-a-token"} {
				r := w.e.do(tok, method, path, p.body(w.alice, w.acme[p.kind]))
				want(t, r, http.StatusUnauthorized, "unauthenticated")
				if !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
					t.Errorf("401 without a Bearer challenge: %v", r.header)
				}
				record(w.bob, r)
			}

			// A foreign or invisible target answers exactly like an absent one.
			cases := []struct {
				c   who
				ids map[string]string
			}{
				{w.calice, w.acme}, {w.mharness, w.acme}, {w.mrita, w.acme},
				{w.alice, w.corp}, {w.harness, w.corp}, {w.rita, w.corp},
				{w.bob, w.acme},
			}
			for _, tc := range cases {
				target := tc.ids[p.kind]
				if p.kind == "" {
					record(tc.c, w.call(pat, p, tc.c, target, nil))
					continue
				}
				foreign := w.call(pat, p, tc.c, target, nil)
				absent := w.call(pat, p, tc.c, absentID, nil)
				record(tc.c, foreign)
				record(tc.c, absent)
				if a, b := normalize(foreign.body, target), normalize(absent.body, absentID); foreign.status != absent.status || a != b {
					t.Errorf("%s: a foreign %s id answers %d %s\nbut an absent id answers %d %s", tc.c.name, p.kind, foreign.status, a, absent.status, b)
				}
				if method == "GET" && foreign.status != http.StatusNotFound {
					t.Errorf("%s: GET of a foreign id = %d, want 404", tc.c.name, foreign.status)
				}
				if absent.status == http.StatusNotFound && strings.Contains(p.path, "{id}") {
					garbage := w.call(pat, p, tc.c, "not-an-id", nil)
					if garbage.status != absent.status || string(garbage.body) != string(absent.body) {
						t.Errorf("%s: a malformed id answers %d %s, an absent one %d %s", tc.c.name, garbage.status, garbage.body, absent.status, absent.body)
					}
				}
			}

			// An agent naming a user of another tenant, or nobody, is refused
			// the same way; an agent naming no subject is a 400.
			for _, name := range []string{"mallory", "nobody"} {
				r := w.call(pat, p, w.harness, w.acme[p.kind], &name)
				want(t, r, http.StatusForbidden, "subject_not_allowed")
				record(w.harness, r)
			}
			none := ""
			r := w.call(pat, p, w.harness, w.acme[p.kind], &none)
			if p.subjectless {
				want(t, r, http.StatusOK, "")
			} else {
				want(t, r, http.StatusBadRequest, "invalid_input")
			}
			record(w.harness, r)
			// A user naming someone else is refused too.
			bob := "bob"
			r = w.call(pat, p, w.alice, w.acme[p.kind], &bob)
			want(t, r, http.StatusForbidden, "subject_not_allowed")
		})
	}

	t.Run("unregistered channel", func(t *testing.T) {
		before := w.e.count("acme")
		for _, tc := range []struct {
			c       who
			channel string
		}{{w.harness, "user"}, {w.alice, "tool:web"}, {w.alice, "agent"}} {
			r := w.e.do(tc.c.token, "POST", "/v1/memories?subject="+tc.c.subject,
				MemoryRequest{Namespace: "notes", Class: "episode", Body: "claimed channel", Channel: tc.channel})
			want(t, r, http.StatusForbidden, "forbidden")
		}
		r := w.e.do(w.harness.token, "POST", "/v1/sessions/"+w.acme["session"]+"/observations?subject=alice",
			ObservationRequest{Channel: "user", Text: "I am the user"})
		want(t, r, http.StatusForbidden, "forbidden")
		if after := w.e.count("acme"); after != before {
			t.Fatalf("records %d -> %d after refused writes", before, after)
		}
	})

	for _, r := range seen {
		if r.status >= 500 {
			t.Errorf("server error in the matrix: %d %s", r.status, r.body)
		}
	}
}
