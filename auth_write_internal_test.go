package custody

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// TestPrincipalsRefused: a batch none of whose writes expects a principals
// version reads none; otherwise the version is read once, and exactly the
// writes expecting another one are refused, those expecting it and those
// expecting nothing (or settled) kept.
func TestPrincipalsRefused(t *testing.T) {
	expect := func(v int64, settled bool) context.Context {
		e := &principalsExpectation{version: v}
		e.settled.Store(settled)
		return context.WithValue(context.Background(), expectationKey{}, e)
	}
	reads := 0
	read := func(n int64) func() (int64, error) {
		return func() (int64, error) { reads++; return n, nil }
	}
	plain := context.Background()
	if refused, err := PrincipalsRefused([]context.Context{plain, expect(3, true)}, read(4)); refused != nil || err != nil || reads != 0 {
		t.Fatalf("no write expecting a version: refused %v, %v, %d reads; want nil and no read", refused, err, reads)
	}
	refused, err := PrincipalsRefused([]context.Context{expect(4, false), plain, expect(3, false), expect(3, true)}, read(4))
	if err != nil || reads != 1 {
		t.Fatalf("%v, %d reads; want one read", err, reads)
	}
	if want := []bool{false, false, true, false}; !slices.Equal(refused, want) {
		t.Fatalf("refused %v, want %v: only the write expecting version 3 while it is 4", refused, want)
	}
	boom := errors.New("the store is gone")
	if _, err := PrincipalsRefused([]context.Context{expect(4, false)}, func() (int64, error) { return 0, boom }); !errors.Is(err, boom) {
		t.Fatalf("a failed read: %v, want it returned", err)
	}
}
