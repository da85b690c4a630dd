package logmonitor

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	formats "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"
)

// testWitness is a C2SP tlog-cosignature witness key pair.
type testWitness struct {
	signer note.Signer
	vkey   string
}

func newTestWitness(t *testing.T, name string) testWitness {
	t.Helper()
	skey, vkey, err := note.GenerateKey(rand.Reader, name)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := formats.NewSignerForCosignatureV1(skey)
	if err != nil {
		t.Fatal(err)
	}
	if vkey, err = formats.VKeyToCosignatureV1(vkey); err != nil {
		t.Fatal(err)
	}
	return testWitness{signer, vkey}
}

// The checkpoint counts only valid cosignatures of the witnesses given,
// and only recent ones: a checkpoint cosigned by the witness passes and
// names it; one cosigned by another key, not at all, or longer ago than
// MaxAge is ErrNotWitnessed; MinWitnesses 1 of 2 passes with one.
func TestWitnessedCheckpoint(t *testing.T) {
	const origin = "example.com/log/acme"
	skey, vkey, err := note.GenerateKey(rand.Reader, origin)
	if err != nil {
		t.Fatal(err)
	}
	logSigner, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	w1, w2, other := newTestWitness(t, "example.com/w1"), newTestWitness(t, "example.com/w2"), newTestWitness(t, "example.com/w1")
	empty := sha256.Sum256(nil)
	text := fmt.Sprintf("%s\n0\n%s\n", origin, base64.StdEncoding.EncodeToString(empty[:]))
	var served atomic.Pointer[[]byte]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/log/checkpoint" {
			http.NotFound(w, r)
			return
		}
		w.Write(*served.Load())
	}))
	defer srv.Close()
	sign := func(signers ...note.Signer) {
		msg, err := note.Sign(&note.Note{Text: text}, append([]note.Signer{logSigner}, signers...)...)
		if err != nil {
			t.Fatal(err)
		}
		served.Store(&msg)
	}
	step := func(now time.Time, min int, witnesses ...testWitness) (*Checkpoint, error) {
		var keys []string
		for _, w := range witnesses {
			keys = append(keys, w.vkey)
		}
		m, err := New(Options{URL: srv.URL + "/log/", VerifierKey: vkey, Witnesses: keys, MinWitnesses: min,
			Now: func() time.Time { return now }}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got *Checkpoint
		err = m.Step(t.Context(), func(ev Event) { got = ev.Checkpoint })
		return got, err
	}
	now := time.Now()

	sign(w1.signer)
	if cp, err := step(now, 0, w1); err != nil || cp == nil || strings.Join(cp.Witnesses, ",") != "example.com/w1" || cp.Size != 0 || cp.Origin != origin {
		t.Fatalf("a checkpoint cosigned by the witness: %+v, %v; want it, naming the witness", cp, err)
	}
	if _, err := step(now.Add(DefaultMaxAge+time.Hour), 0, w1); !errors.Is(err, ErrNotWitnessed) {
		t.Fatalf("a cosignature older than MaxAge: %v; want ErrNotWitnessed", err)
	}
	if _, err := step(now, 0, w1, w2); !errors.Is(err, ErrNotWitnessed) || !strings.Contains(err.Error(), "example.com/w2") {
		t.Fatalf("2 witnesses required, 1 cosigned: %v; want ErrNotWitnessed naming the other", err)
	}
	if cp, err := step(now, 1, w1, w2); err != nil || len(cp.Witnesses) != 1 {
		t.Fatalf("1 of 2 witnesses required, 1 cosigned: %+v, %v; want it", cp, err)
	}
	sign(other.signer) // the same name, another key
	if _, err := step(now, 0, w1); !errors.Is(err, ErrNotWitnessed) {
		t.Fatalf("a cosignature by another key of the witness's name: %v; want ErrNotWitnessed", err)
	}
	sign()
	if _, err := step(now, 0, w1); !errors.Is(err, ErrNotWitnessed) {
		t.Fatalf("no cosignature: %v; want ErrNotWitnessed", err)
	}
	if cp, err := step(now, 0); err != nil || cp == nil {
		t.Fatalf("no cosignature and no witness asked for: %+v, %v; want it", cp, err)
	}
	// A checkpoint of another log's key is refused whatever its witnesses.
	_, otherVkey, _ := note.GenerateKey(rand.Reader, origin)
	if _, err := New(Options{URL: srv.URL + "/log", VerifierKey: otherVkey}, *served.Load()); err == nil {
		t.Fatal("a pin signed by another key was taken")
	}
}
