package postgres

import (
	"hash/maphash"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/internal/lexical"
	"github.com/custody-mem/custody/internal/postings"
)

// A record the copy holds is moved when its audience changes (bob's own
// note becomes the tenant's: alice's ranking then holds it), and a
// change of its text is refused (the copy cannot take terms out), as is
// its erasure; a new record's erasure is nothing to hold.
func TestCopyApply(t *testing.T) {
	seed := maphash.MakeSeed()
	tc := &tenantCopy{x: postings.New(), rows: map[string]uint32{}}
	alice := copyParts(custody.Scope{Tenant: "acme", Subject: "alice"})
	ranked := func() int {
		return len(tc.x.Rank(lexical.Query("otter", 8), alice, new(postings.Scratch)))
	}
	note := copyRecord{id: "r1", body: "an otter in the river", owner: "bob", audience: custody.AudienceOwner}
	if !tc.applyLocked(seed, note) || ranked() != 0 {
		t.Fatalf("bob's own note: applied, and alice's ranking holds %d records; want 0", ranked())
	}
	note.audience = custody.AudienceTenant
	if !tc.applyLocked(seed, note) || ranked() != 1 {
		t.Fatalf("bob's note shared with the tenant: alice's ranking holds %d records; want 1", ranked())
	}
	if !tc.applyLocked(seed, note) || len(tc.ids) != 1 {
		t.Fatalf("the same record again: %d rows, want 1", len(tc.ids))
	}
	changed := note
	changed.body = "a heron in the river"
	if tc.applyLocked(seed, changed) {
		t.Error("a record whose text changed was applied")
	}
	erased := note
	erased.body, erased.erased = "", true
	if tc.applyLocked(seed, erased) {
		t.Error("an erased record was applied")
	}
	if !tc.applyLocked(seed, copyRecord{id: "r2", erased: true, owner: "bob", audience: custody.AudienceOwner}) || len(tc.ids) != 1 {
		t.Errorf("a new erased record: %d rows, want 1 (nothing added)", len(tc.ids))
	}
}
