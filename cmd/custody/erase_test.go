package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestEraseAndPauseCLI: custody erase erases the caller's own memory, and
// --all-of a user's every memory with a receipt; custody pause holds a
// channel's writes until resumed. Each verb has its usage.
func TestEraseAndPauseCLI(t *testing.T) {
	add := cliServer(t)
	alice := add("alice", []string{"user"})
	root := add("root", []string{"admin"})
	rita := add("rita", []string{"reviewer"})
	mail := add("mail", []string{"agent"}, "agent")
	remember := func(body string) string {
		out := mustRun(t, alice, runRemember, "--namespace", "n", "--class", "fact", "--json", body)
		var d struct{ ID string }
		if err := json.Unmarshal([]byte(out), &d); err != nil || d.ID == "" {
			t.Fatalf("remember: %q %v", out, err)
		}
		return d.ID
	}
	one, two := remember("alice passport X1234567"), remember("alice likes tea")
	if out := mustRun(t, alice, runErase, one); strings.TrimSpace(out) != one {
		t.Fatalf("erase printed %q", out)
	}
	if _, _, err := run(t, alice, runErase, one); err == nil {
		t.Fatal("erasing twice succeeded")
	}
	if s := mustRun(t, alice, runSearch, "passport"); strings.Contains(s, one) {
		t.Fatalf("search after the erasure: %s", s)
	}
	if s := mustRun(t, alice, runSearch, "tea"); !strings.Contains(s, two) {
		t.Fatalf("the other record: %s", s)
	}
	out := mustRun(t, root, runErase, "--all-of", "alice", "--json")
	var rc struct {
		Erased        []struct{ ID string }
		AlreadyErased int `json:"already_erased"`
	}
	if err := json.Unmarshal([]byte(out), &rc); err != nil || len(rc.Erased) != 1 || rc.Erased[0].ID != two || rc.AlreadyErased != 1 {
		t.Fatalf("erase --all-of: %q %v", out, err)
	}

	if _, _, err := run(t, alice, runPause, "--channel", "agent", "--reason", "x"); err == nil {
		t.Fatal("a user paused a channel")
	}
	out = mustRun(t, rita, runPause, "--channel", "agent", "--reason", "harness compromised", "--json")
	var p struct{ ID string }
	if err := json.Unmarshal([]byte(out), &p); err != nil || p.ID == "" {
		t.Fatalf("pause: %q %v", out, err)
	}
	note := []string{"--subject", "alice", "--namespace", "n", "--class", "episode", "--channel", "agent", "--json", "met bob"}
	if out := mustRun(t, mail, runRemember, note...); !strings.Contains(out, `"quarantined"`) || !strings.Contains(out, "pause:"+p.ID) {
		t.Fatalf("a write during the pause: %s", out)
	}
	if out := mustRun(t, rita, runPause, "list"); !strings.Contains(out, p.ID) || !strings.Contains(out, "channel agent") {
		t.Fatalf("pause list: %s", out)
	}
	mustRun(t, rita, runPause, "resume", p.ID)
	if out := mustRun(t, mail, runRemember, note...); !strings.Contains(out, `"admitted"`) {
		t.Fatalf("the write after the resume: %s", out)
	}
	for _, args := range [][]string{{"erase", "-h"}, {"pause", "-h"}, {"pause", "list", "-h"}, {"pause", "resume", "-h"}} {
		if code, _, msg := cli(args...); code != 0 || !strings.Contains(msg, "Usage: custody "+args[0]) {
			t.Errorf("%v: %d %s", args, code, msg)
		}
	}
}
