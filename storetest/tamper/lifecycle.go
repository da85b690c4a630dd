package tamper

import (
	"encoding/hex"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
)

// testLifecycle changes principals through the admin API: each change
// takes effect on the next request, verifies, and an insider's edit that
// puts the old state back is named by verify and refused by the server.
func testLifecycle(t *testing.T, b Backend) {
	t.Run("Revoke", func(t *testing.T) { testRevoke(t, b) })
	t.Run("Rotate", func(t *testing.T) { testRotate(t, b) })
	t.Run("Channels", func(t *testing.T) { testNarrowChannels(t, b) })
	t.Run("AdminOnly", func(t *testing.T) { testPrincipalAdminOnly(t, b) })
}

func fact(body, channel string) map[string]any {
	return map[string]any{"namespace": "n", "class": "fact", "body": body, "channel": channel}
}

// authedRoutes lists every authenticated route of the OpenAPI document as
// "METHOD path", with path parameters filled in.
func (e *tamperEnv) authedRoutes() []string {
	e.t.Helper()
	a := e.do("", "GET", "/v1/openapi.json", nil)
	var doc struct {
		Paths map[string]map[string]struct {
			Security []map[string][]string `json:"security"`
		} `json:"paths"`
	}
	if err := json.Unmarshal([]byte(a.body), &doc); err != nil || len(doc.Paths) == 0 {
		e.t.Fatalf("the OpenAPI document: %v %s", err, a.body)
	}
	var out []string
	for path, ops := range doc.Paths {
		for method, op := range ops {
			if len(op.Security) == 0 {
				continue
			}
			p := strings.NewReplacer("{id}", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "{name}", "bob").Replace(path)
			out = append(out, strings.ToUpper(method)+" "+p)
		}
	}
	slices.Sort(out)
	return out
}

func testRevoke(t *testing.T, b Backend) {
	e := newTamperEnv(t, b)
	_, root := e.add("root", []string{"admin"})
	_, alice := e.add("alice", []string{"user"})
	_, bob := e.add("bob", []string{"user"})
	_, mail := e.add("mail", []string{"agent"}, "tool:email")

	w := e.do(alice, "POST", "/v1/memories", fact("I like tea", "user"))
	e.expect(w, http.StatusCreated, "")
	var rec struct{ ID string }
	json.Unmarshal([]byte(w.body), &rec)
	e.expect(e.do(alice, "GET", "/v1/memories/"+rec.ID, nil), http.StatusOK, "")
	e.expect(e.do(mail, "GET", "/v1/memories?namespace=n&subject=alice", nil), http.StatusOK, "")

	r := e.do(root, "POST", "/v1/principals/alice/revoke", map[string]any{"reason": "laptop stolen"})
	e.expect(r, http.StatusOK, "")
	if !strings.Contains(r.body, `"status":"revoked"`) {
		t.Fatalf("revoke answered %s; want status revoked", r.body)
	}
	// Every authenticated route refuses the token, on the next request.
	routes := e.authedRoutes()
	if len(routes) < 20 {
		t.Fatalf("only %d authenticated routes in the OpenAPI document", len(routes))
	}
	for _, rt := range routes {
		method, path, _ := strings.Cut(rt, " ")
		e.expect(e.do(alice, method, path, nil), http.StatusUnauthorized, "unauthenticated")
	}
	// Nobody acts for her any more; bob, untouched, works.
	e.expect(e.do(mail, "GET", "/v1/memories?namespace=n&subject=alice", nil), http.StatusForbidden, "subject_not_allowed")
	e.expect(e.do(bob, "POST", "/v1/memories", fact("I like coffee", "user")), http.StatusCreated, "")
	// Her record stays, with its writer, and the store verifies.
	err := e.store.View(e.ctx, func(tx custody.Tx) error {
		got, err := tx.Record(e.ctx, "acme", rec.ID)
		if err == nil && got.Writer != "acme/alice" {
			t.Errorf("alice's record after her revocation: writer %q", got.Writer)
		}
		return err
	})
	if err != nil {
		t.Fatalf("alice's record after her revocation: %v", err)
	}
	e.verify()
	// A revocation is final.
	e.expect(e.do(root, "POST", "/v1/principals/alice/rotate", nil), http.StatusConflict, "conflict")
	e.expect(e.do(root, "PATCH", "/v1/principals/alice", map[string]any{"roles": []string{"user"}}), http.StatusConflict, "conflict")
	// The entry is the admin's and the auditor's to read, not bob's.
	entries := func(token string) string {
		a := e.do(token, "GET", "/v1/log/entries?start=0&end=1000", nil)
		e.expect(a, http.StatusOK, "")
		return a.body
	}
	if !strings.Contains(entries(root), `"transition":"principal_revoke"`) {
		t.Errorf("the admin does not read the revocation entry")
	}
	if l := entries(bob); strings.Contains(l, "principal_revoke") || strings.Contains(l, "laptop stolen") {
		t.Errorf("bob reads the revocation entry: %s", l)
	}

	// An insider puts her old token back: verify names it, the server
	// refuses it.
	e.exec(`UPDATE principals SET token_hash = %s, sealed_key = (SELECT sealed_key FROM principals WHERE name = 'bob') WHERE name = 'alice'`,
		b.blob(custody.HashToken(alice)))
	e.verify("principal acme/alice", "token hash")
	e.expect(e.do(alice, "GET", "/v1/memories?namespace=n", nil), http.StatusForbidden, "principal_unverified")
	e.expect(e.do(bob, "GET", "/v1/memories?namespace=n", nil), http.StatusOK, "")
}

func testRotate(t *testing.T, b Backend) {
	e := newTamperEnv(t, b)
	_, root := e.add("root", []string{"admin"})
	_, bob := e.add("bob", []string{"user"})
	e.expect(e.do(bob, "POST", "/v1/memories", fact("I like coffee", "user")), http.StatusCreated, "")

	r := e.do(root, "POST", "/v1/principals/bob/rotate", nil)
	e.expect(r, http.StatusOK, "")
	var rot struct {
		Token     string
		Principal struct{ Name, Status string }
	}
	json.Unmarshal([]byte(r.body), &rot)
	if !strings.HasPrefix(rot.Token, "cst_") || rot.Token == bob || rot.Principal.Name != "bob" || rot.Principal.Status != "active" {
		t.Fatalf("rotate answered %s", r.body)
	}
	e.expect(e.do(bob, "GET", "/v1/memories?namespace=n", nil), http.StatusUnauthorized, "unauthenticated")
	l := e.do(rot.Token, "GET", "/v1/memories?namespace=n", nil)
	e.expect(l, http.StatusOK, "")
	if !strings.Contains(l.body, "I like coffee") {
		t.Errorf("bob with his new token does not see his record: %s", l.body)
	}
	e.verify()
	// Neither show nor list carries the new token or its hash.
	show := e.do(root, "GET", "/v1/principals/bob", nil)
	e.expect(show, http.StatusOK, "")
	list := e.do(root, "GET", "/v1/principals", nil)
	e.expect(list, http.StatusOK, "")
	for _, body := range []string{show.body, list.body} {
		if strings.Contains(body, rot.Token) || strings.Contains(body, hex.EncodeToString(custody.HashToken(rot.Token))) || strings.Contains(body, "token_hash") {
			t.Errorf("an answer carries token material: %s", body)
		}
	}

	e.exec(`UPDATE principals SET token_hash = %s WHERE name = 'bob'`, b.blob(custody.HashToken(bob)))
	e.verify("principal acme/bob", "token hash")
	e.expect(e.do(bob, "GET", "/v1/memories?namespace=n", nil), http.StatusForbidden, "principal_unverified")
	// The admin sees which principal the server refuses, and why.
	if s := e.do(root, "GET", "/v1/principals/bob", nil); s.status != http.StatusOK || !strings.Contains(s.body, `"status":"unverified"`) || !strings.Contains(s.body, "token hash") {
		t.Errorf("bob's row with his old token hash put back, as the admin sees it: %d %s", s.status, s.body)
	}
	e.exec(`UPDATE principals SET token_hash = %s WHERE name = 'bob'`, b.blob(custody.HashToken(rot.Token)))
	e.verify()
	e.expect(e.do(rot.Token, "GET", "/v1/memories?namespace=n", nil), http.StatusOK, "")
}

func testNarrowChannels(t *testing.T, b Backend) {
	e := newTamperEnv(t, b)
	_, root := e.add("root", []string{"admin"})
	e.add("alice", []string{"user"})
	_, mail := e.add("mail", []string{"agent"}, "agent", "tool:email")
	onEmail := map[string]any{"subject": "alice", "namespace": "n", "class": "episode", "body": "an email arrived", "channel": "tool:email"}
	onAgent := map[string]any{"subject": "alice", "namespace": "n", "class": "episode", "body": "a note", "channel": "agent"}
	if a := e.do(mail, "POST", "/v1/memories", onEmail); a.status != http.StatusCreated && a.status != http.StatusAccepted {
		t.Fatalf("the email before the change: %d %s", a.status, a.body)
	}

	r := e.do(root, "PATCH", "/v1/principals/mail", map[string]any{"channels": []string{"agent"}, "reason": "email tool compromised"})
	e.expect(r, http.StatusOK, "")
	if !strings.Contains(r.body, `"channels":["agent"]`) || !strings.Contains(r.body, `"roles":["agent"]`) {
		t.Fatalf("update answered %s", r.body)
	}
	e.expect(e.do(mail, "POST", "/v1/memories", onEmail), http.StatusForbidden, "forbidden")
	e.expect(e.do(mail, "POST", "/v1/memories", onAgent), http.StatusCreated, "")
	e.verify()

	e.exec(`UPDATE principals SET channels = %s WHERE name = 'mail'`, b.list("agent", "tool:email"))
	e.verify("principal acme/mail", "channels")
	e.expect(e.do(mail, "POST", "/v1/memories", onEmail), http.StatusForbidden, "principal_unverified")
	e.exec(`UPDATE principals SET channels = %s WHERE name = 'mail'`, b.list("agent"))
	e.verify()

	// Groups: set, then removed with an empty list.
	r = e.do(root, "PATCH", "/v1/principals/alice", map[string]any{"groups": []string{"finance"}})
	e.expect(r, http.StatusOK, "")
	if !strings.Contains(r.body, `"groups":["finance"]`) {
		t.Fatalf("update of groups answered %s", r.body)
	}
	r = e.do(root, "PATCH", "/v1/principals/alice", map[string]any{"groups": []string{}})
	e.expect(r, http.StatusOK, "")
	if !strings.Contains(r.body, `"groups":[]`) {
		t.Fatalf("removing the groups answered %s", r.body)
	}
	e.verify()
}

func testPrincipalAdminOnly(t *testing.T, b Backend) {
	e := newTamperEnv(t, b)
	_, root := e.add("root", []string{"admin"})
	_, rita := e.add("rita", []string{"reviewer", "auditor"})
	_, bob := e.add("bob", []string{"user"})
	if _, _, err := e.svc.AddPrincipal(e.ctx, custody.PrincipalInput{Tenant: "other", Name: "carol", Roles: []string{"user"}}); err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{rita, bob} {
		e.expect(e.do(tok, "GET", "/v1/principals", nil), http.StatusForbidden, "forbidden")
		e.expect(e.do(tok, "POST", "/v1/principals/bob/revoke", nil), http.StatusForbidden, "forbidden")
	}
	e.expect(e.do(bob, "GET", "/v1/memories?namespace=n", nil), http.StatusOK, "")
	// The admin sees its tenant only.
	l := e.do(root, "GET", "/v1/principals", nil)
	e.expect(l, http.StatusOK, "")
	var list struct {
		Items []struct{ Name, Tenant string }
	}
	json.Unmarshal([]byte(l.body), &list)
	var names []string
	for _, p := range list.Items {
		names = append(names, p.Tenant+"/"+p.Name)
	}
	if !slices.Equal(names, []string{"acme/bob", "acme/rita", "acme/root"}) {
		t.Fatalf("the admin's list: %v", names)
	}
	e.expect(e.do(root, "GET", "/v1/principals/carol", nil), http.StatusNotFound, "not_found")
	e.expect(e.do(root, "POST", "/v1/principals/carol/revoke", nil), http.StatusNotFound, "not_found")
	// Bad input is a 400 and changes nothing; the admin cannot lock itself out.
	e.expect(e.do(root, "PATCH", "/v1/principals/bob", map[string]any{"roles": []string{"superuser"}}), http.StatusBadRequest, "invalid_input")
	e.expect(e.do(root, "PATCH", "/v1/principals/bob", map[string]any{"channels": []string{"no such channel"}}), http.StatusBadRequest, "invalid_input")
	e.expect(e.do(root, "PATCH", "/v1/principals/bob", map[string]any{}), http.StatusBadRequest, "invalid_input")
	e.expect(e.do(root, "PATCH", "/v1/principals/bob", map[string]any{"token": "x"}), http.StatusBadRequest, "unknown_field")
	e.expect(e.do(root, "POST", "/v1/principals/root/revoke", nil), http.StatusConflict, "conflict")
	e.expect(e.do(root, "PATCH", "/v1/principals/root", map[string]any{"roles": []string{"user"}}), http.StatusConflict, "conflict")
	e.expect(e.do(bob, "GET", "/v1/memories?namespace=n", nil), http.StatusOK, "")
	s := e.do(root, "GET", "/v1/principals/bob", nil)
	e.expect(s, http.StatusOK, "")
	if !strings.Contains(s.body, `"roles":["user"]`) || !strings.Contains(s.body, `"status":"active"`) {
		t.Fatalf("bob after the refused changes: %s", s.body)
	}
	e.verify()
}
