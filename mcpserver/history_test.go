package mcpserver_test

import (
	"strings"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/mcpserver"
)

// TestHistoryNamesSupersededVersions: an older admitted version of a key
// is shown as superseded by the version that replaced it, not as
// "admitted"; the version in force shows its body.
func TestHistoryNamesSupersededVersions(t *testing.T) {
	a := newAcme(t)
	write := func(body string) *custody.Decision {
		d, err := a.svc.Remember(a.ctx, a.alice, custody.Candidate{Namespace: "prefs", Key: "tone", Class: "preference", Body: body, Channel: "user"})
		if err != nil || d.State != custody.StateAdmitted {
			t.Fatalf("remember %q: %v %+v", body, err, d)
		}
		return d
	}
	first, second, third := write("formal"), write("casual"), write("terse")
	cl := a.connect(t, a.harness)
	h, txt := ok[mcpserver.HistoryOutput](cl, mcpserver.ToolHistory, map[string]any{"id": third.ID})
	if len(h.Versions) != 3 {
		t.Fatalf("history has %d versions, want 3", len(h.Versions))
	}
	for i, want := range []struct {
		id           string
		supersededBy int
		body         string
	}{{first.ID, 2, ""}, {second.ID, 3, ""}, {third.ID, 0, "terse"}} {
		v := h.Versions[i]
		if v.ID != want.id || v.SupersededBy != want.supersededBy || v.Body != want.body {
			t.Errorf("version %d = id %s superseded_by %d body %q, want %s %d %q", i+1, v.ID, v.SupersededBy, v.Body, want.id, want.supersededBy, want.body)
		}
	}
	for _, part := range []string{"(body withheld: superseded by version 2;", "(body withheld: superseded by version 3;", "state=superseded", "terse"} {
		if !strings.Contains(txt, part) {
			t.Errorf("history text lacks %q:\n%s", part, txt)
		}
	}
	if strings.Contains(txt, "this version is admitted") || strings.Count(txt, "state=admitted") != 1 {
		t.Errorf("a superseded version is labelled admitted:\n%s", txt)
	}
}
