package postgres

import (
	"hash/maphash"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/internal/lexical"
	"github.com/custody-mem/custody/internal/postings"
)

// A record the copy holds is moved when its audience changes (bob's own
// note becomes the tenant's: alice's ranking then holds it). A change of
// its text is handed to replaceLocked, which takes the old terms out
// without them: an erased note's terms are nowhere in the copy, while the
// other records sharing them are still ranked, and a note whose text
// changed is ranked by its new text alone. A new record's erasure is
// nothing to hold.
func TestCopyApply(t *testing.T) {
	seed := maphash.MakeSeed()
	tc := &tenantCopy{x: postings.New(), rows: map[string]uint32{}}
	alice := copyParts(custody.Scope{Tenant: "acme", Subject: "alice"})
	ranked := func(query string) int {
		return len(tc.x.Rank(lexical.Query(query, 8), postings.Filter{Parts: alice}, new(postings.Scratch)))
	}
	apply := func(r copyRecord) {
		t.Helper()
		if tc.applyLocked(seed, r) {
			t.Fatalf("%s: a text change reported for a record the copy holds with that text", r.id)
		}
	}
	note := copyRecord{id: "r1", body: "an otter in the river", owner: "bob", audience: custody.AudienceOwner, live: true}
	apply(note)
	apply(copyRecord{id: "r0", body: "an otter on the bank", owner: "alice", audience: custody.AudienceOwner, live: true})
	if ranked("river") != 0 {
		t.Fatalf("bob's own note: alice's ranking holds %d records; want 0", ranked("river"))
	}
	note.audience = custody.AudienceTenant
	apply(note)
	if ranked("river") != 1 {
		t.Fatalf("bob's note shared with the tenant: alice's ranking holds %d records; want 1", ranked("river"))
	}
	note.live = false // quarantined, say: no one's ranking holds it
	apply(note)
	if ranked("river") != 0 {
		t.Fatalf("bob's shared note, no longer admitted: alice's ranking holds %d records; want 0", ranked("river"))
	}
	note.live = true
	apply(note)
	if len(tc.ids) != 2 {
		t.Fatalf("the same record again: %d rows, want 2", len(tc.ids))
	}

	changed := note
	changed.body = "a heron in the reeds"
	if !tc.applyLocked(seed, changed) {
		t.Fatal("a record whose text changed was not reported")
	}
	tc.replaceLocked(seed, []copyRecord{changed})
	if ranked("river") != 0 || ranked("heron") != 1 || ranked("otter") != 1 {
		t.Fatalf("after its text changed: river %d, heron %d, otter %d records; want 0, 1, 1", ranked("river"), ranked("heron"), ranked("otter"))
	}
	erased := changed
	erased.body, erased.erased = "", true
	if !tc.applyLocked(seed, erased) {
		t.Fatal("an erased record was not reported")
	}
	tc.replaceLocked(seed, []copyRecord{erased})
	if tc.x.Matches("heron") != 0 || tc.x.Rows() != 1 || ranked("otter") != 1 {
		t.Fatalf("after the erasure: heron in %d rows, %d rows, otter %d; want 0, 1, 1 (alice's note)", tc.x.Matches("heron"), tc.x.Rows(), ranked("otter"))
	}
	apply(erased) // seen again: nothing to do
	apply(copyRecord{id: "r2", erased: true, owner: "bob", audience: custody.AudienceOwner})
	if len(tc.ids) != 2 {
		t.Errorf("a new erased record: %d rows, want 2 (nothing added)", len(tc.ids))
	}
}
