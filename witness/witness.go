// Package witness has custody's checkpoints cosigned by C2SP tlog-witness
// witnesses (https://c2sp.org/tlog-witness): a [Pusher] sends each new
// checkpoint of each log, with the consistency proof from the size the
// witness last saw, to every configured witness, and keeps each witness's
// answer, its cosignature, which is then served with the checkpoint
// ([AppendCosignatures]) and checked by custody verify ([Count]).
//
// A witness holds the latest checkpoint it cosigned of each log and
// cosigns a newer one only if it extends it, so a log rewritten by
// someone who holds the server's key file is refused ("bad consistency
// proof"), and a checkpoint of the rewritten log never gathers the
// cosignatures verify asks for.
//
// The pusher never blocks writes: it runs in its own goroutines, reads
// the latest checkpoint when told there is one (or every poll interval),
// and only the newest checkpoint matters, so its queue is one slot.
package witness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	formats "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"
)

// Witness is one witness to push checkpoints to.
type Witness struct {
	// URL is the witness's submission prefix: checkpoints are POSTed to
	// URL + "/add-checkpoint".
	URL string
	// VKey is the witness's verifier key (C2SP signed-note vkey, an
	// Ed25519 cosignature/v1 key); it names the witness in the store.
	VKey string
	// Verifier checks its cosignatures.
	Verifier note.Verifier
}

// NewVerifier returns the verifier of the cosignatures of the witness of
// vkey (a C2SP cosignature/v1 vkey, algorithm 0x04; a plain Ed25519 vkey
// is taken as the cosignature key of the same Ed25519 key).
func NewVerifier(vkey string) (note.Verifier, error) {
	v, err := formats.NewVerifierForCosignatureV1(strings.TrimSpace(vkey))
	if err != nil {
		return nil, fmt.Errorf("witness key %q is not a C2SP verifier key (name+hash+base64 key, as the witness prints it): %w", vkey, err)
	}
	return v, nil
}

// Parse parses the --witness flag of custody serve: URL=VKEY.
func Parse(s string) (Witness, error) {
	u, vkey, ok := strings.Cut(s, "=")
	if !ok {
		return Witness{}, fmt.Errorf("--witness %q: want URL=VKEY, the witness's submission URL and its verifier key", s)
	}
	if p, err := url.Parse(u); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return Witness{}, fmt.Errorf("--witness %q: %q is not an http(s) URL", s, u)
	}
	v, err := NewVerifier(vkey)
	if err != nil {
		return Witness{}, fmt.Errorf("--witness %q: %w", s, err)
	}
	return Witness{URL: strings.TrimSuffix(u, "/"), VKey: strings.TrimSpace(vkey), Verifier: v}, nil
}

// State is what the store keeps of one witness for one log.
type State struct {
	// Size is the tree size the witness is known to hold: the size of its
	// last cosignature, or the one it named when it refused a push (409).
	Size uint64
	// Cosigned is the size of the checkpoint Signature cosigns.
	Cosigned uint64
	// Signature is the witness's latest cosignature line ("— name
	// base64\n"), "" if it never cosigned.
	Signature string
}

// Store keeps the witnesses' states, per log origin and witness vkey.
type Store interface {
	WitnessStates(ctx context.Context, origin string) (map[string]State, error)
	SaveWitnessState(ctx context.Context, origin, vkey string, st State) error
}

// Published keeps, per log origin, the newest checkpoint that met the
// witness policy, with the cosignatures that met it: what is served as
// the log's current checkpoint.
type Published interface {
	// PublishedCheckpoint returns the published checkpoint of the log of
	// origin, nil if none.
	PublishedCheckpoint(ctx context.Context, origin string) ([]byte, error)
	// SavePublished records note, a checkpoint of size with its
	// cosignatures, unless a larger one is recorded already.
	SavePublished(ctx context.Context, origin string, size uint64, note []byte) error
}

var (
	// ErrAhead is returned when a witness holds a larger tree of a log
	// than the checkpoint sent to it: the store was rolled back behind
	// what the witness cosigned.
	ErrAhead = errors.New("the witness holds a larger tree of this log than the store")
	// ErrInconsistent is returned when a witness refuses a checkpoint as
	// inconsistent with the one it cosigned (422, a bad consistency
	// proof; or, at the same size, another root): the log's history was
	// rewritten.
	ErrInconsistent = errors.New("the witness holds another history of this log")
	// ErrUnknownLog is returned when a witness does not know a log's
	// origin (404): it was not told of the log (custody log list).
	ErrUnknownLog = errors.New("the witness does not know this log")
)

// Header returns the origin and size of a checkpoint note, unverified.
func Header(msg []byte) (origin string, size uint64, err error) {
	lines := strings.SplitN(string(msg), "\n", 3)
	if len(lines) < 3 {
		return "", 0, errors.New("witness: not a checkpoint: fewer than three lines")
	}
	size, err = strconv.ParseUint(lines[1], 10, 64)
	if err != nil {
		return "", 0, fmt.Errorf("witness: not a checkpoint: size line %q", lines[1])
	}
	return lines[0], size, nil
}

// AppendCosignatures returns msg, a signed checkpoint note, with the
// stored cosignatures of that very checkpoint appended as signature lines
// (those already there are not repeated).
func AppendCosignatures(msg []byte, states map[string]State) []byte {
	_, size, err := Header(msg)
	if err != nil {
		return msg
	}
	out := msg
	for _, st := range sortedStates(states) {
		if st.Signature == "" || st.Cosigned != size || bytes.Contains(msg, []byte(st.Signature)) {
			continue
		}
		out = append(out[:len(out):len(out)], st.Signature...)
	}
	return out
}

// Check verifies sig, one cosignature line, against the checkpoint msg
// for the witness of v: its text, with only that line as signature.
func Check(msg []byte, sig string, v note.Verifier) error {
	text, _, ok := bytes.Cut(msg, []byte("\n\n"))
	if !ok {
		return errors.New("witness: not a signed note")
	}
	n, err := note.Open([]byte(string(text)+"\n\n"+sig), note.VerifierList(v))
	if err != nil {
		return fmt.Errorf("the cosignature of %s does not verify on this checkpoint: %w", v.Name(), err)
	}
	if len(n.Sigs) != 1 {
		return fmt.Errorf("the cosignature of %s does not verify on this checkpoint", v.Name())
	}
	return nil
}

// Count returns how many of verifiers (one per witness) have a valid
// cosignature on msg, a checkpoint with its cosignature lines appended,
// and for each one that has none, why.
func Count(msg []byte, verifiers []note.Verifier) (int, []string) {
	_, sigs, ok := bytes.Cut(msg, []byte("\n\n"))
	if !ok {
		return 0, []string{"the checkpoint is not a signed note"}
	}
	n := 0
	var missing []string
	for _, v := range verifiers {
		found := false
		for _, line := range strings.SplitAfter(string(sigs), "\n") {
			if strings.HasPrefix(line, "— "+v.Name()+" ") && Check(msg, line, v) == nil {
				found = true
				break
			}
		}
		if found {
			n++
		} else {
			missing = append(missing, fmt.Sprintf("no valid cosignature of %s", v.Name()))
		}
	}
	return n, missing
}
