package witness_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"filippo.io/torchwood"
	"github.com/custody-mem/custody/witness"
	"golang.org/x/mod/sumdb/note"
)

// memStore is a witness.Store in memory.
type memStore struct {
	mu sync.Mutex
	m  map[string]map[string]witness.State
}

func (s *memStore) WitnessStates(_ context.Context, origin string) (map[string]witness.State, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]witness.State{}
	for k, v := range s.m[origin] {
		out[k] = v
	}
	return out, nil
}

func (s *memStore) SaveWitnessState(_ context.Context, origin, vkey string, st witness.State) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]map[string]witness.State{}
	}
	if s.m[origin] == nil {
		s.m[origin] = map[string]witness.State{}
	}
	s.m[origin][vkey] = st
	return nil
}

// fakeLog is a witness.Log of one checkpoint whose proofs are fixed.
type fakeLog struct {
	mu    sync.Mutex
	note  []byte
	asked [][2]uint64
}

func (l *fakeLog) Checkpoints(context.Context) ([][]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return [][]byte{l.note}, nil
}

func (l *fakeLog) ConsistencyProof(_ context.Context, origin string, from, to uint64) ([][]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.asked = append(l.asked, [2]uint64{from, to})
	return [][]byte{bytes.Repeat([]byte{byte(from)}, 32)}, nil
}

// fakeWitness answers add-checkpoint as a C2SP witness would, after the
// failures it is told to give first.
type fakeWitness struct {
	t      *testing.T
	signer *torchwood.CosignatureSigner
	mu     sync.Mutex
	known  uint64
	fail   []int // statuses to answer first
	olds   []uint64
}

func (f *fakeWitness) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	head, msg, _ := bytes.Cut(body, []byte("\n\n"))
	first, _, _ := strings.Cut(string(head), "\n")
	old, err := strconv.ParseUint(strings.TrimPrefix(first, "old "), 10, 64)
	if err != nil {
		http.Error(w, "bad request", 400)
		return
	}
	f.olds = append(f.olds, old)
	if len(f.fail) > 0 {
		code := f.fail[0]
		f.fail = f.fail[1:]
		http.Error(w, "try later", code)
		return
	}
	if old != f.known {
		w.WriteHeader(http.StatusConflict)
		fmt.Fprintf(w, "%d\n", f.known)
		return
	}
	text, _, _ := bytes.Cut(msg, []byte("\n\n"))
	signed, err := note.Sign(&note.Note{Text: string(text) + "\n"}, f.signer)
	if err != nil {
		f.t.Error(err)
		return
	}
	_, sigs, _ := bytes.Cut(signed, []byte("\n\n"))
	_, size, _ := witness.Header(msg)
	f.known = size
	w.Write(sigs)
}

func newCheckpoint(t *testing.T, origin string, size uint64, root ...byte) []byte {
	t.Helper()
	skey, _, err := note.GenerateKey(rand.Reader, origin)
	if err != nil {
		t.Fatal(err)
	}
	s, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	h := make([]byte, 32)
	copy(h, root)
	msg, err := note.Sign(&note.Note{Text: fmt.Sprintf("%s\n%d\n%s\n", origin, size, base64.StdEncoding.EncodeToString(h))}, s)
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

// The pusher answers a 409 with the proof from the witness's size, retries
// failures with a backoff, stores the cosignature, which then verifies on
// the checkpoint it was made for and no other.
func TestPusherConflictRetryAndCosignature(t *testing.T) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := torchwood.NewCosignatureSigner("example.com/w", priv)
	if err != nil {
		t.Fatal(err)
	}
	fw := &fakeWitness{t: t, signer: signer, known: 5, fail: []int{503, 500}}
	srv := httptest.NewServer(fw)
	defer srv.Close()
	w, err := witness.Parse(srv.URL + "=" + signer.Verifier().String())
	if err != nil {
		t.Fatal(err)
	}
	const origin = "example.com/log"
	log := &fakeLog{note: newCheckpoint(t, origin, 9)}
	st := &memStore{}
	p := witness.Start(context.Background(), witness.Options{Witnesses: []witness.Witness{w}, Log: log, Store: st,
		Logger: slog.New(slog.DiscardHandler), PollInterval: time.Hour, MinBackoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond})
	defer p.Close()
	p.Notify()
	p.Notify() // a second notice while one waits is folded into it: never blocks
	var got witness.State
	deadline := time.Now().Add(time.Minute)
	for got.Signature == "" {
		if time.Now().After(deadline) {
			t.Fatalf("no cosignature stored; the witness saw olds %v", fw.olds)
		}
		time.Sleep(5 * time.Millisecond) // polling interval
		states, _ := st.WitnessStates(context.Background(), origin)
		got = states[w.VKey]
	}
	if got.Size != 9 || got.Cosigned != 9 {
		t.Fatalf("state %+v; want size and cosigned 9", got)
	}
	fw.mu.Lock()
	olds := fmt.Sprint(fw.olds)
	fw.mu.Unlock()
	if olds != "[0 0 0 5]" { // two failures retried, the 409, then the proof from 5
		t.Fatalf("the witness was sent old sizes %s; want [0 0 0 5]", olds)
	}
	log.mu.Lock()
	if len(log.asked) != 1 || log.asked[0] != [2]uint64{5, 9} {
		t.Fatalf("proofs asked %v; want one from 5 to 9", log.asked)
	}
	log.mu.Unlock()

	cosigned := witness.AppendCosignatures(log.note, map[string]witness.State{w.VKey: got})
	if n, missing := witness.Count(cosigned, []note.Verifier{w.Verifier}); n != 1 {
		t.Fatalf("the stored cosignature does not count: %v", missing)
	}
	if n, _ := witness.Count(log.note, []note.Verifier{w.Verifier}); n != 0 {
		t.Fatal("a checkpoint without the cosignature counts it")
	}
	// Appended to a checkpoint of the same size with another root (another
	// history), it does not verify.
	other := witness.AppendCosignatures(newCheckpoint(t, origin, 9, 1), map[string]witness.State{w.VKey: got})
	if n, _ := witness.Count(other, []note.Verifier{w.Verifier}); n != 0 {
		t.Fatal("a cosignature verified on another checkpoint")
	}
	// And a stored cosignature of another size is not appended at all.
	if bytes.Contains(witness.AppendCosignatures(newCheckpoint(t, origin, 10), map[string]witness.State{w.VKey: got}), []byte("— example.com/w ")) {
		t.Fatal("a cosignature of size 9 was appended to a checkpoint of size 10")
	}
}

// Parse refuses what is not URL=VKEY.
func TestParseWitnessFlag(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	signer, _ := torchwood.NewCosignatureSigner("example.com/w", priv)
	vkey := signer.Verifier().String()
	if _, err := witness.Parse("http://127.0.0.1:1=" + vkey); err != nil {
		t.Fatalf("a good flag: %v", err)
	}
	for _, bad := range []string{vkey, "ftp://x=" + vkey, "http://x=notakey", "=" + vkey} {
		if _, err := witness.Parse(bad); err == nil {
			t.Errorf("Parse(%q) passed", bad)
		}
	}
}
