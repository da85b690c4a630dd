package mcpserver_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/custody-mem/custody/mcpserver"
	"github.com/custody-mem/custody/sqlite"
)

// A principal whose row was edited behind custody's back (a user made
// admin) cannot open an MCP session: 403 principal_unverified as JSON,
// not a 500; an untouched user still can.
func TestHTTPRefusesEditedPrincipal(t *testing.T) {
	f := newFixture(t, mcpserver.Options{})
	_, alice := f.principal(t, "acme", "alice", []string{"user"}, nil)
	_, bob := f.principal(t, "acme", "bob", []string{"user"}, nil)
	ts := httptest.NewServer(mcpserver.HTTPHandler(f.svc, mcpserver.Options{}))
	t.Cleanup(ts.Close)
	rawSession(t, ts.URL, bob, nil)

	db := f.svc.Store().(*sqlite.Store).DB()
	if _, err := db.ExecContext(t.Context(), `UPDATE principals SET roles = '["user","admin"]' WHERE name = 'bob'`); err != nil {
		t.Fatal(err)
	}
	resp, body := rawPost(t, ts.URL, bob, "", nil, initializeBody)
	wantJSONError(t, resp, body, http.StatusForbidden, "principal_unverified")
	rawSession(t, ts.URL, alice, nil)
}
