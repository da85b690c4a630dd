package storetest

import (
	"testing"

	"github.com/custody-mem/custody/witness"
)

// testWitnessStates pins the witness table: a state is kept per log origin
// and witness key, replaced by the next, and never seen under another
// origin.
func testWitnessStates(t *testing.T, e *env) {
	ws, ok := e.store.(witness.Store)
	if !ok {
		t.Fatalf("%T does not keep witness states (witness.Store)", e.store)
	}
	got, err := ws.WitnessStates(e.ctx, "example.com/log")
	if err != nil || len(got) != 0 {
		t.Fatalf("states of a new store = %v, %v; want none", got, err)
	}
	a := witness.State{Size: 9, Cosigned: 7, Signature: "— w1 AAAA\n"}
	if err := ws.SaveWitnessState(e.ctx, "example.com/log", "w1+00000000+key", a); err != nil {
		t.Fatal(err)
	}
	b := witness.State{Size: 3}
	if err := ws.SaveWitnessState(e.ctx, "example.com/log", "w2+00000000+key", b); err != nil {
		t.Fatal(err)
	}
	a.Size, a.Cosigned, a.Signature = 12, 12, "— w1 BBBB\n"
	if err := ws.SaveWitnessState(e.ctx, "example.com/log", "w1+00000000+key", a); err != nil {
		t.Fatal(err)
	}
	got, err = ws.WitnessStates(e.ctx, "example.com/log")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["w1+00000000+key"] != a || got["w2+00000000+key"] != b {
		t.Fatalf("states = %+v; want w1 %+v and w2 %+v", got, a, b)
	}
	if other, err := ws.WitnessStates(e.ctx, "example.com/other"); err != nil || len(other) != 0 {
		t.Fatalf("states of another origin = %v, %v; want none", other, err)
	}
}

// testPublishedCheckpoints pins the published checkpoints: one per log
// origin, replaced by one of the same or a larger size (fresher
// cosignatures, a newer checkpoint), never by a smaller one.
func testPublishedCheckpoints(t *testing.T, e *env) {
	pub, ok := e.store.(witness.Published)
	if !ok {
		t.Fatalf("%T does not keep published checkpoints (witness.Published)", e.store)
	}
	get := func(origin string) string {
		t.Helper()
		note, err := pub.PublishedCheckpoint(e.ctx, origin)
		if err != nil {
			t.Fatal(err)
		}
		return string(note)
	}
	save := func(origin string, size uint64, note string) {
		t.Helper()
		if err := pub.SavePublished(e.ctx, origin, size, []byte(note)); err != nil {
			t.Fatal(err)
		}
	}
	if got := get("example.com/log"); got != "" {
		t.Fatalf("published checkpoint of a new store = %q; want none", got)
	}
	save("example.com/log", 5, "five")
	save("example.com/other", 2, "two")
	save("example.com/log", 5, "five, cosigned again")
	if got := get("example.com/log"); got != "five, cosigned again" {
		t.Fatalf("after a fresh cosignature of the same size: %q", got)
	}
	save("example.com/log", 9, "nine")
	save("example.com/log", 7, "seven")
	if got := get("example.com/log"); got != "nine" {
		t.Fatalf("after saving 9 then 7: %q, want the larger kept", got)
	}
	if got := get("example.com/other"); got != "two" {
		t.Fatalf("another origin's: %q", got)
	}
}
