package factsmemo

import (
	"slices"
	"strconv"
	"testing"
)

func TestMemo(t *testing.T) {
	var m Memo
	ids := []string{"a", "b", "c", "d"}
	if got := m.Unknown(ids); !slices.Equal(got, ids) {
		t.Fatalf("an empty memo: %v, want every id", got)
	}
	m.Note([]string{"b", "d"})
	if got := m.Unknown(ids); !slices.Equal(got, []string{"a", "c"}) {
		t.Fatalf("after noting b and d: %v, want [a c]", got)
	}
	// Full, it forgets what it held and keeps the newest.
	many := make([]string, Max)
	for i := range many {
		many[i] = "x" + strconv.Itoa(i)
	}
	m.Note(many)
	if got := m.Unknown(ids); !slices.Equal(got, []string{"a", "b", "c", "d"}) {
		t.Fatalf("after filling up: %v, want every id of before forgotten", got)
	}
	if got := m.Unknown(many[:3]); len(got) != 0 {
		t.Fatalf("the newest ids: %v unknown, want none", got)
	}
	m.Forget()
	if got := m.Unknown(many[:3]); len(got) != 3 {
		t.Fatalf("after Forget: %v, want every id unknown", got)
	}
}
