package embed_test

import (
	"context"
	"testing"

	"github.com/custody-mem/custody/embed"
)

func builtin(t *testing.T) *embed.Builtin {
	t.Helper()
	b, err := embed.NewBuiltin(0)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func vec(t *testing.T, e embed.Embedder, texts ...string) [][]float32 {
	t.Helper()
	vs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(vs), len(texts))
	}
	return vs
}

// TestBuiltinParaphrase pins the reason the built-in embedder exists: a
// paraphrase that shares no word with the text is nearer to it than
// unrelated texts are.
func TestBuiltinParaphrase(t *testing.T) {
	b := builtin(t)
	cases := []struct{ query, want string }{
		{"brief replies", "short answers"},
		{"automobile repair", "fixing the car"},
		{"physician appointment", "visit to the doctor"},
	}
	others := []string{"the garden needs watering", "invoice due friday", "concert tickets for saturday", "a recipe for bread"}
	for _, c := range cases {
		vs := vec(t, b, append([]string{c.query, c.want}, others...)...)
		want := embed.Dot(vs[0], vs[1])
		if want <= 0.05 {
			t.Errorf("%q · %q = %.3f, want a clear similarity", c.query, c.want, want)
		}
		for i, o := range others {
			if got := embed.Dot(vs[0], vs[2+i]); got >= want {
				t.Errorf("%q · %q = %.3f, not below %q's %.3f", c.query, o, got, c.want, want)
			}
		}
	}
}

func TestBuiltinVectors(t *testing.T) {
	b := builtin(t)
	if got, want := b.Dim(), embed.DefaultBuiltinDim; got != want {
		t.Errorf("Dim = %d, want %d", got, want)
	}
	vs := vec(t, b, "Alice went to the garden club meeting", "Alice went to the garden club meeting", "", "the and of")
	if d := embed.Dot(vs[0], vs[0]); d < 0.999 || d > 1.001 {
		t.Errorf("|v|² = %f, want 1", d)
	}
	if d := embed.Dot(vs[0], vs[1]); d < 0.999 {
		t.Errorf("the same text gives different vectors (dot %f)", d)
	}
	for i := 2; i < 4; i++ {
		if d := embed.Dot(vs[i], vs[i]); d != 0 {
			t.Errorf("a text without content words has |v|² = %f, want 0", d)
		}
	}
	// A word WordNet does not know still matches itself.
	vs = vec(t, b, "zorblatt", "the zorblatt arrived", "the parcel arrived")
	if embed.Dot(vs[0], vs[1]) <= embed.Dot(vs[0], vs[2]) {
		t.Error("an unknown word does not match itself")
	}
	small, err := embed.NewBuiltin(64)
	if err != nil {
		t.Fatal(err)
	}
	if small.Model() == b.Model() {
		t.Errorf("dimensions 64 and %d share the model id %q", b.Dim(), b.Model())
	}
	if _, err := embed.NewBuiltin(8); err == nil {
		t.Error("dimension 8 accepted")
	}
}

func TestNewProviders(t *testing.T) {
	if e, err := embed.New(embed.Config{Provider: "none"}); e != nil || err != nil {
		t.Errorf("none = %v, %v; want nil, nil", e, err)
	}
	if e, err := embed.New(embed.Config{}); err != nil || e.Model() != glove(t).Model() {
		t.Errorf("default = %v, %v; want glove", e, err)
	}
	if e, err := embed.New(embed.Config{Provider: "builtin"}); err != nil || e.Model() != builtin(t).Model() {
		t.Errorf("builtin = %v, %v; want the WordNet embedder", e, err)
	}
	for _, c := range []embed.Config{{Provider: "word2vec"}, {Provider: "openai"}, {Provider: "openai", URL: "http://x/v1"}, {Provider: "openai", URL: "ftp://x", Model: "m"}} {
		if _, err := embed.New(c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}
