package bodybudget

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// Bodies read against one budget hold what they read until released: a
// read that would pass the budget is refused, and so is every later read
// of that body; once a body is released its bytes serve another.
func TestBudget(t *testing.T) {
	b := New(100)
	one := b.Wrap(io.NopCloser(strings.NewReader(strings.Repeat("a", 60))))
	if n, err := io.Copy(io.Discard, one); n != 60 || err != nil {
		t.Fatalf("the first body: %d, %v", n, err)
	}
	if b.Held() != 60 {
		t.Fatalf("held %d, want 60", b.Held())
	}
	two := b.Wrap(io.NopCloser(strings.NewReader(strings.Repeat("b", 60))))
	if _, err := io.ReadAll(two); !errors.Is(err, ErrExhausted) || !two.Exhausted() {
		t.Fatalf("the second body past the budget: %v, want ErrExhausted", err)
	}
	if _, err := two.Read(make([]byte, 1)); !errors.Is(err, ErrExhausted) {
		t.Fatalf("a read after the refusal: %v", err)
	}
	if b.Refused() != 1 || b.Held() != 60 {
		t.Fatalf("refused %d, held %d; want 1 and 60", b.Refused(), b.Held())
	}
	two.Release()
	one.Release()
	if b.Held() != 0 {
		t.Fatalf("held %d after both were released", b.Held())
	}
	three := b.Wrap(io.NopCloser(strings.NewReader(strings.Repeat("c", 100))))
	if n, err := io.Copy(io.Discard, three); n != 100 || err != nil {
		t.Fatalf("a body of the whole budget once the others ended: %d, %v", n, err)
	}
	// A read never takes more than ReadChunk.
	big := New(1 << 30).Wrap(io.NopCloser(strings.NewReader(strings.Repeat("d", 3*ReadChunk))))
	if n, _ := big.Read(make([]byte, 3*ReadChunk)); n > ReadChunk {
		t.Fatalf("one read took %d bytes, more than ReadChunk", n)
	}
}
