package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"testing"

	"github.com/custody-mem/custody"
	"github.com/custody-mem/custody/tlog"
)

// TestRestoreKeepsDescendantsOfRetiredRecordsOut pins design rule 10: a
// snapshot taken before a retirement, restored into a new store on the same
// server key and registry, brings back neither the retired record nor the
// summary derived from it (suspended, with a logged receipt naming the
// parent); the twin summary of a record still in force comes back admitted.
func TestRestoreKeepsDescendantsOfRetiredRecordsOut(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dir := t.TempDir()
			key, _, err := tlog.LoadOrCreateServerKey(filepath.Join(dir, "server.key"))
			if err != nil {
				t.Fatal(err)
			}
			opts := custody.Options{RegistryFile: filepath.Join(dir, "server.key.registry")}
			st, _ := b.open(t)
			e := newEnvOn(t, st, key, opts)
			alice := e.principal("acme", "alice", []string{"user"})
			harness := e.principal("acme", "harness", []string{"agent"}, "agent", "derive")
			rita := e.principal("acme", "rita", []string{"reviewer"})
			post := func(token string, m MemoryRequest) string {
				t.Helper()
				r := e.do(token, "POST", "/v1/memories", m)
				want(t, r, http.StatusCreated, "")
				return r.json(t)["id"].(string)
			}
			fact := post(alice, MemoryRequest{Namespace: "bank", Key: "rent", Class: "fact", Body: "rent goes to ACCT-1042", Channel: "user"})
			sum := post(harness, MemoryRequest{Namespace: "sum", Class: "episode", Body: "pays rent to ACCT-1042", Channel: "derive", Subject: "alice",
				DerivedFrom: []custody.Edge{{ID: fact, Weight: 1}}})
			sum2 := post(harness, MemoryRequest{Namespace: "sum", Class: "episode", Body: "rent summary of the summary", Channel: "derive", Subject: "alice",
				DerivedFrom: []custody.Edge{{ID: sum, Weight: 1}}})
			city := post(alice, MemoryRequest{Namespace: "bank", Key: "city", Class: "fact", Body: "lives in Lyon", Channel: "user"})
			citySum := post(harness, MemoryRequest{Namespace: "sum", Class: "episode", Body: "based in Lyon", Channel: "derive", Subject: "alice",
				DerivedFrom: []custody.Edge{{ID: city, Weight: 1}}})

			var snap bytes.Buffer
			if _, err := e.svc.Export(e.ctx, "acme", &snap); err != nil {
				t.Fatal(err)
			}
			want(t, e.do(rita, "POST", "/v1/memories/"+fact+"/retire", RetireRequest{Reason: "wrong account"}), http.StatusOK, "")

			st2, _ := b.open(t)
			e2 := newEnvOn(t, st2, key, opts)
			rep, err := e2.svc.Restore(e2.ctx, snap.Bytes(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range []string{fact, sum, sum2} {
				if !slices.Contains(rep.Withheld, id) {
					t.Errorf("restore report withholds %q, want %s among them", rep.Withheld, id)
				}
				want(t, e2.do(alice, "GET", "/v1/memories/"+id, nil), http.StatusNotFound, "not_found")
			}
			for _, id := range []string{city, citySum} {
				want(t, e2.do(alice, "GET", "/v1/memories/"+id, nil), http.StatusOK, "")
			}
			r := e2.do(rita, "GET", "/v1/memories/"+sum2+"/lineage", nil)
			want(t, r, http.StatusOK, "")
			var l custody.Lineage
			if err := json.Unmarshal(r.body, &l); err != nil {
				t.Fatal(err)
			}
			states := map[string]custody.State{l.Record.ID: l.Record.State}
			for _, n := range l.Ancestors {
				states[n.ID] = n.State
			}
			if states[fact] != custody.StateRetired || states[sum] != custody.StateSuspended || states[sum2] != custody.StateSuspended {
				t.Errorf("restored lineage states = %v, want the fact retired and both summaries suspended", states)
			}
			if rc := l.Record.Receipt; rc == nil || !slices.Contains(rc.Rules, "cascade") || rc.LogIndex == 0 {
				t.Errorf("restored summary's receipt = %+v, want the logged cascade", rc)
			}
			if _, err := e2.svc.Verify(e2.ctx, custody.VerifyOptions{}); err != nil {
				t.Errorf("verify after restore: %v", err)
			}
		})
	}
}

// TestRestoreHonoursTombstones: without a registry beside the key, the
// store's own tombstones keep a retired id retired. A record retired after
// the snapshot whose row then disappears (an insider's delete) comes back
// retired, not admitted; the twin, a lost row of a record that was never
// retired, comes back admitted.
func TestRestoreHonoursTombstones(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env, raw func(testing.TB, string), b backend) {
		alice := e.principal("acme", "alice", []string{"user"})
		rita := e.principal("acme", "rita", []string{"reviewer"})
		post := func(body string) string {
			r := e.do(alice, "POST", "/v1/memories", MemoryRequest{Namespace: "bank", Class: "fact", Body: body, Channel: "user"})
			want(t, r, http.StatusCreated, "")
			return r.json(t)["id"].(string)
		}
		retired, kept := post("rent goes to ACCT-1042"), post("alice lives in Lyon")
		var snap bytes.Buffer
		if _, err := e.svc.Export(e.ctx, "acme", &snap); err != nil {
			t.Fatal(err)
		}
		want(t, e.do(rita, "POST", "/v1/memories/"+retired+"/retire", RetireRequest{Reason: "wrong account"}), http.StatusOK, "")
		ids := "('" + retired + "', '" + kept + "')"
		if b.name == "sqlite" { // the rows of its text indexes go with the record's
			raw(t, "DELETE FROM index_pending WHERE rid IN (SELECT rid FROM records WHERE id IN "+ids+")")
		}
		raw(t, "DELETE FROM records WHERE id IN "+ids)
		if _, err := e.svc.Restore(e.ctx, snap.Bytes(), nil); err != nil {
			t.Fatal(err)
		}
		want(t, e.do(alice, "GET", "/v1/memories/"+retired, nil), http.StatusNotFound, "not_found")
		want(t, e.do(alice, "GET", "/v1/memories/"+kept, nil), http.StatusOK, "")
		r := e.do(rita, "GET", "/v1/memories/"+retired+"/lineage", nil)
		want(t, r, http.StatusOK, "")
		var l custody.Lineage
		if err := json.Unmarshal(r.body, &l); err != nil || l.Record.State != custody.StateRetired {
			t.Errorf("restored tombstoned record: %s, want retired", r.body)
		}
	})
}
