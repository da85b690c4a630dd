package witness_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"filippo.io/torchwood"
	"github.com/custody-mem/custody/witness"
	"golang.org/x/mod/sumdb/note"
)

// cosigner is a witness key: its vkey and a way to cosign a checkpoint.
type cosigner struct {
	name, vkey string
	signer     *torchwood.CosignatureSigner
}

func newCosigner(t testing.TB, name string) cosigner {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := torchwood.NewCosignatureSigner(name, priv)
	if err != nil {
		t.Fatal(err)
	}
	return cosigner{name: name, vkey: s.Verifier().String(), signer: s}
}

// cosign returns msg with c's cosignature line appended.
func (c cosigner) cosign(t testing.TB, msg []byte) []byte {
	t.Helper()
	text, _, _ := bytes.Cut(msg, []byte("\n\n"))
	signed, err := note.Sign(&note.Note{Text: string(text) + "\n"}, c.signer)
	if err != nil {
		t.Fatal(err)
	}
	_, sig, _ := bytes.Cut(signed, []byte("\n\n"))
	return append(bytes.Clone(msg), sig...)
}

func TestParsePolicy(t *testing.T) {
	a, b := newCosigner(t, "a.example/w"), newCosigner(t, "b.example/w")
	log := newCheckpointKey(t, "example.com/log")
	for _, c := range []struct {
		name, text, err string
	}{
		{"one witness", "witness A " + a.vkey + "\nquorum A\n", ""},
		{"comments, blanks, tabs, a URL", "# policy\n\n\twitness  A\t" + a.vkey + " https://a.example/w \nquorum A", ""},
		{"quorum none", "quorum none\n", ""},
		{"a log line", "log " + log + "\nwitness A " + a.vkey + "\nquorum A\n", ""},
		{"groups", "witness A " + a.vkey + "\nwitness B " + b.vkey + "\ngroup G 2 A B\ngroup H any G\nquorum H\n", ""},
		{"no quorum", "witness A " + a.vkey + "\n", "no quorum line"},
		{"two quorums", "quorum none\nquorum none\n", "second quorum"},
		{"undefined quorum", "quorum A\n", "not defined"},
		{"forward reference", "group G any A\nwitness A " + a.vkey + "\nquorum G\n", "not defined"},
		{"a name twice", "witness A " + a.vkey + "\nwitness A " + b.vkey + "\nquorum A\n", "defined twice"},
		{"a key twice", "witness A " + a.vkey + "\nwitness B " + a.vkey + "\nquorum A\n", "listed twice"},
		{"a member twice", "witness A " + a.vkey + "\nwitness B " + b.vkey + "\ngroup G any A\ngroup H any A B\nquorum H\n", "member of a group already"},
		{"threshold too large", "witness A " + a.vkey + "\ngroup G 2 A\nquorum G\n", "threshold"},
		{"threshold zero", "witness A " + a.vkey + "\ngroup G 0 A\nquorum G\n", "threshold"},
		{"threshold with a sign", "witness A " + a.vkey + "\ngroup G +1 A\nquorum G\n", "threshold"},
		{"none as a member", "witness A " + a.vkey + "\ngroup G any none\nquorum G\n", "none cannot"},
		{"a bad key", "witness A notakey\nquorum A\n", "line 1"},
		{"a bad URL", "witness A " + a.vkey + " ftp://a\nquorum A\n", "http(s) URL"},
		{"an unknown keyword", "witnesses A " + a.vkey + "\nquorum none\n", "unknown keyword"},
		{"a control character", "quorum none\r\n", "control character"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := witness.ParsePolicy([]byte(c.text))
			if c.err == "" && err != nil {
				t.Fatalf("ParsePolicy: %v", err)
			}
			if c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
				t.Fatalf("ParsePolicy = %v; want an error with %q", err, c.err)
			}
		})
	}
}

// newCheckpointKey is the vkey of a log key named origin.
func newCheckpointKey(t *testing.T, origin string) string {
	_, vkey, err := note.GenerateKey(rand.Reader, origin)
	if err != nil {
		t.Fatal(err)
	}
	return vkey
}

// TestPolicyMet checks quorums of witnesses and groups against real
// cosignatures: enough valid ones meet it; too few, one made on another
// checkpoint, one of a witness the policy does not name, or ones older
// than the bound do not; quorum none needs none.
func TestPolicyMet(t *testing.T) {
	x1, x2, x3, y1 := newCosigner(t, "x1.example"), newCosigner(t, "x2.example"), newCosigner(t, "x3.example"), newCosigner(t, "y1.example")
	stranger := newCosigner(t, "stranger.example")
	p, err := witness.ParsePolicy([]byte(fmt.Sprintf(`witness X1 %s
witness X2 %s
witness X3 %s
group X 2 X1 X2 X3
witness Y1 %s
group XY all X Y1
quorum XY
`, x1.vkey, x2.vkey, x3.vkey, y1.vkey)))
	if err != nil {
		t.Fatal(err)
	}
	cp := newCheckpoint(t, "example.com/log", 9)
	other := newCheckpoint(t, "example.com/log", 9, 1)
	with := func(cs ...cosigner) []byte {
		msg := cp
		for _, c := range cs {
			msg = c.cosign(t, msg)
		}
		return msg
	}
	for _, c := range []struct {
		name string
		msg  []byte
		ok   bool
	}{
		{"none", cp, false},
		{"two of X without Y", with(x1, x2), false},
		{"one of X with Y", with(x1, y1), false},
		{"two of X with Y", with(x1, x3, y1), true},
		{"all with Y", with(x1, x2, x3, y1), true},
		{"a stranger in X's place", with(x1, stranger, y1), false},
		{"Y's cosignature of another checkpoint", append(with(x1, x2), bytes.TrimPrefix(y1.cosign(t, other), other)...), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := p.Met(c.msg, time.Time{})
			if c.ok != (err == nil) {
				t.Fatalf("Met = %v, want met %v", err, c.ok)
			}
			if err != nil && !strings.Contains(err.Error(), "2 of X") && !strings.Contains(err.Error(), "X (2 of") {
				t.Fatalf("the error %q does not spell the quorum", err)
			}
		})
	}
	fresh := with(x1, x2, y1)
	if err := p.Met(fresh, time.Now().Add(-time.Hour)); err != nil {
		t.Fatalf("cosignatures of now, bound an hour ago: %v", err)
	}
	if err := p.Met(fresh, time.Now().Add(time.Hour)); err == nil || !strings.Contains(err.Error(), "made since") {
		t.Fatalf("cosignatures older than the bound: %v; want refused as old", err)
	}
	none, err := witness.ParsePolicy([]byte("quorum none\n"))
	if err != nil || !none.None() || none.Met(cp, time.Time{}) != nil {
		t.Fatalf("quorum none: %v", err)
	}
}

func FuzzParsePolicy(f *testing.F) {
	a := newCosigner(f, "a.example/w")
	f.Add([]byte("witness A " + a.vkey + " https://a.example\ngroup G any A\nquorum G\n"))
	f.Add([]byte("quorum none\n"))
	f.Add([]byte("log x+00000000+AQ\nquorum none"))
	cp := []byte("example.com/log\n1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\n— a.example/w AAAA\n")
	f.Fuzz(func(t *testing.T, text []byte) {
		p, err := witness.ParsePolicy(text)
		if err != nil {
			return
		}
		_ = p.Met(cp, time.Time{})
		_ = p.Pushed()
	})
}

// countingLog is a witness.Log whose checkpoint grows at every read, so
// that witnesses asked one after the other would never see the same one.
type countingLog struct {
	mu     sync.Mutex
	origin string
	size   uint64
	t      *testing.T
}

func (l *countingLog) Checkpoints(context.Context) ([][]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.size++
	return [][]byte{newCheckpoint(l.t, l.origin, l.size)}, nil
}

func (l *countingLog) ConsistencyProof(_ context.Context, origin string, from, to uint64) ([][]byte, error) {
	return [][]byte{bytes.Repeat([]byte{1}, 32)}, nil
}

// memPublished is a witness.Published in memory.
type memPublished struct {
	mu   sync.Mutex
	note []byte
	size uint64
}

func (m *memPublished) PublishedCheckpoint(context.Context, string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.note, nil
}

func (m *memPublished) SavePublished(_ context.Context, _ string, size uint64, note []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if size >= m.size {
		m.note, m.size = note, size
	}
	return nil
}

// TestPusherPublishesWhatMeetsThePolicy: under a policy of both of two
// witnesses, on a log that grows between any two reads, the pusher sends
// both the same checkpoint until both cosigned it, and publishes it with
// both cosignatures; a checkpoint one cosigned alone is never published.
func TestPusherPublishesWhatMeetsThePolicy(t *testing.T) {
	a, b := newCosigner(t, "a.example/w"), newCosigner(t, "b.example/w")
	var ws []witness.Witness
	for _, c := range []cosigner{a, b} {
		srv := httptest.NewServer(&fakeWitness{t: t, signer: c.signer})
		t.Cleanup(srv.Close)
		w, err := witness.Parse(srv.URL + "=" + c.vkey)
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w)
	}
	policy, err := witness.ParsePolicy([]byte("witness A " + a.vkey + "\nwitness B " + b.vkey + "\ngroup AB all A B\nquorum AB\n"))
	if err != nil {
		t.Fatal(err)
	}
	log := &countingLog{origin: "example.com/log", t: t}
	pub := &memPublished{}
	p := witness.Start(context.Background(), witness.Options{Witnesses: ws, Log: log, Store: &memStore{}, Policy: policy, Published: pub,
		Logger: slog.New(slog.DiscardHandler), PollInterval: 5 * time.Millisecond, MinBackoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond})
	defer p.Close()
	deadline := time.Now().Add(time.Minute)
	for {
		note, _ := pub.PublishedCheckpoint(context.Background(), log.origin)
		if note != nil {
			if err := policy.Met(note, time.Time{}); err != nil {
				t.Fatalf("the published checkpoint does not meet the policy: %v\n%s", err, note)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("nothing was published: the witnesses never cosigned one checkpoint")
		}
		time.Sleep(5 * time.Millisecond) // polling interval
	}
}

// TestPusherRefreshesOldCosignatures: a checkpoint whose cosignature grew
// older than Refresh is sent again, and the witness's fresh cosignature
// replaces the old one; before that, it is not sent again.
func TestPusherRefreshesOldCosignatures(t *testing.T) {
	c := newCosigner(t, "a.example/w")
	fw := &fakeWitness{t: t, signer: c.signer}
	srv := httptest.NewServer(fw)
	defer srv.Close()
	w, err := witness.Parse(srv.URL + "=" + c.vkey)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	log := &fakeLog{note: newCheckpoint(t, "example.com/log", 9)}
	st := &memStore{}
	p := witness.Start(context.Background(), witness.Options{Witnesses: []witness.Witness{w}, Log: log, Store: st, Now: clock, Refresh: time.Hour,
		Logger: slog.New(slog.DiscardHandler), PollInterval: 5 * time.Millisecond})
	defer p.Close()
	requests := func() int { fw.mu.Lock(); defer fw.mu.Unlock(); return len(fw.olds) }
	deadline := time.Now().Add(time.Minute)
	for requests() < 1 {
		if time.Now().After(deadline) {
			t.Fatal("the checkpoint was never sent")
		}
		time.Sleep(5 * time.Millisecond) // polling interval
	}
	time.Sleep(50 * time.Millisecond) // ten polls: none may send it again
	if n := requests(); n != 1 {
		t.Fatalf("a fresh cosignature was asked for again: %d requests", n)
	}
	mu.Lock()
	now = now.Add(2 * time.Hour)
	mu.Unlock()
	for requests() < 2 {
		if time.Now().After(deadline) {
			t.Fatal("an old cosignature was not refreshed")
		}
		time.Sleep(5 * time.Millisecond) // polling interval
	}
	fw.mu.Lock()
	defer fw.mu.Unlock()
	if fw.olds[1] != 9 {
		t.Fatalf("the refresh sent old %d; want 9, the size the witness holds", fw.olds[1])
	}
}
