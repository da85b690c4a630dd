package mcpserver_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/mcpserver"
)

// A revoked principal's open MCP sessions are refused on their next
// message, and so are the sessions of agents acting for it; a rotated
// token is refused on the session it opened, and the new one carries on.
// The untouched principal's session keeps working.
func TestHTTPRevokeAndRotate(t *testing.T) {
	f := newFixture(t, mcpserver.Options{})
	_, alice := f.principal(t, "acme", "alice", []string{"user"}, nil)
	_, bob := f.principal(t, "acme", "bob", []string{"user"}, nil)
	_, harness := f.principal(t, "acme", "harness", []string{"agent"}, nil)
	ts := httptest.NewServer(mcpserver.HTTPHandler(f.svc, mcpserver.Options{}))
	t.Cleanup(ts.Close)
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	asAlice := map[string]string{mcpserver.SubjectHeader: "alice"}

	as := rawSession(t, ts.URL, alice, nil)
	hs := rawSession(t, ts.URL, harness, asAlice)
	bs := rawSession(t, ts.URL, bob, nil)
	for _, c := range []struct{ token, sid string }{{alice, as}, {harness, hs}, {bob, bs}} {
		if resp, body := rawPost(t, ts.URL, c.token, c.sid, asAliceIf(c.token == harness, asAlice), list); resp.StatusCode != http.StatusOK {
			t.Fatalf("before the revocation: %d %s", resp.StatusCode, body)
		}
	}
	admin := custody.PrincipalAdmin{Tenant: "acme", By: "acme/root"}
	if _, err := f.svc.RevokePrincipal(f.ctx, admin, "alice", "incident"); err != nil {
		t.Fatal(err)
	}
	resp, body := rawPost(t, ts.URL, alice, as, nil, list)
	wantJSONError(t, resp, body, http.StatusUnauthorized, "unauthenticated")
	resp, body = rawPost(t, ts.URL, alice, "", nil, initializeBody)
	wantJSONError(t, resp, body, http.StatusUnauthorized, "unauthenticated")
	resp, body = rawPost(t, ts.URL, harness, hs, asAlice, list)
	wantJSONError(t, resp, body, http.StatusForbidden, "subject_not_allowed")
	if resp, body := rawPost(t, ts.URL, bob, bs, nil, list); resp.StatusCode != http.StatusOK || !strings.Contains(body, "memory_remember") {
		t.Fatalf("bob's session after alice's revocation: %d %s", resp.StatusCode, body)
	}

	_, fresh, err := f.svc.RotatePrincipal(f.ctx, admin, "bob", "leaked")
	if err != nil {
		t.Fatal(err)
	}
	resp, body = rawPost(t, ts.URL, bob, bs, nil, list)
	wantJSONError(t, resp, body, http.StatusUnauthorized, "unauthenticated")
	if resp, body := rawPost(t, ts.URL, fresh, bs, nil, list); resp.StatusCode != http.StatusOK {
		t.Fatalf("bob's session with his new token: %d %s", resp.StatusCode, body)
	}
}

func asAliceIf(ok bool, h map[string]string) map[string]string {
	if ok {
		return h
	}
	return nil
}
