package tamper

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
)

// testTenantLogTampering edits one tenant's log behind the store's back
// (a leaf rewritten, a tree node changed, the newest leaf deleted): verify
// reports the difference in that tenant's log, and the other tenant's log
// still verifies on its own, with the root of its checkpoint.
func testTenantLogTampering(t *testing.T, b Backend) {
	for _, tc := range []struct {
		name, edit, want string
	}{
		{"leaf rewritten", `UPDATE log_leaves SET data = (SELECT data FROM log_leaves WHERE tenant = 'beta' AND idx = 0) WHERE tenant = 'beta' AND idx = 2`, "differs from the one recomputed"},
		{"node changed", b.changeLevel1Nodes(bytes.Repeat([]byte{7}, 32)), "tree node"},
		{"newest leaf deleted", `DELETE FROM log_leaves WHERE tenant = 'beta' AND idx = 4`, "checkpoint"},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			e := newTamperEnv(t, b)
			for _, tenant := range []string{"acme", "beta"} {
				p, _, err := e.svc.AddPrincipal(e.ctx, custody.PrincipalInput{Tenant: tenant, Name: "alice", Roles: []string{"user"}})
				if err != nil {
					t.Fatal(err)
				}
				c, err := e.svc.Act(e.ctx, p, "")
				if err != nil {
					t.Fatal(err)
				}
				for _, body := range []string{"one", "two", "three", "four"} {
					if _, err := e.svc.Remember(e.ctx, c, custody.Candidate{Namespace: "n", Class: custody.ClassFact, Body: tenant + " " + body, Channel: custody.ChannelUser}); err != nil {
						t.Fatal(err)
					}
				}
			}
			notes := map[string][]byte{}
			for _, tenant := range []string{"acme", "beta"} {
				n, err := e.svc.Checkpoint(e.ctx, tenant)
				if err != nil {
					t.Fatal(err)
				}
				notes[tenant] = n
			}
			e.verify() // untouched: both logs verify
			e.exec("%s", tc.edit)
			rep, err := e.svc.Verify(e.ctx, custody.VerifyOptions{})
			var d *custody.Difference
			if !errors.As(err, &d) || d.Tenant != "beta" || !strings.Contains(d.What, tc.want) {
				t.Fatalf("verify after %s in beta's log = %v; want a difference in beta's log naming %q", tc.name, err, tc.want)
			}
			if rep == nil || len(rep.Logs) != 2 {
				t.Fatalf("verify report %+v: want both logs", rep)
			}
			acmeCP, err := e.svc.OpenCheckpoint("acme", notes["acme"])
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range rep.Logs {
				switch l.Tenant {
				case "acme":
					if l.Problem != "" || !bytes.Equal(l.Root, acmeCP.Root) || l.Entries != acmeCP.Size {
						t.Errorf("acme's log, untouched, reported %+v; want it verified with its checkpoint's root", l)
					}
				case "beta":
					if l.Problem == "" {
						t.Errorf("beta's log reported without a problem: %+v", l)
					}
				}
			}
		})
	}
}

// changeLevel1Nodes is the statement that sets every level-1 tree node of
// beta's log to hash: rows of log_nodes on PostgreSQL, the second hash of
// the nodes a leaf's row holds on SQLite (its leaves at odd indexes).
func (b Backend) changeLevel1Nodes(hash []byte) string {
	if b.Postgres {
		return `UPDATE log_nodes SET hash = ` + b.blob(hash) + ` WHERE tenant = 'beta' AND level = 1`
	}
	return `UPDATE log_leaves SET nodes = CAST(substr(nodes, 1, 32) || ` + b.blob(hash) + ` || substr(nodes, 65) AS BLOB) WHERE tenant = 'beta' AND length(nodes) >= 64`
}
