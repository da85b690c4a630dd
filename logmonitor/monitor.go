// Package logmonitor follows one tenant's log of a custody server from
// outside, as its security team would: it is written from
// docs/log-format.md alone and imports nothing of custody, only the C2SP
// and transparency libraries of the field (golang.org/x/mod/sumdb,
// filippo.io/torchwood, transparency-dev/formats).
//
// A Monitor holds the newest checkpoint it verified (its pin). Each Step
// fetches the log's checkpoint from its tlog-tiles URL, opens it with the
// log's verifier key, checks the witnesses' cosignatures (how many, how
// recent), proves from the hash tiles that the log extends the pin, and,
// given the token of an admin or auditor of the tenant, reads every new
// entry from the entry bundles (each proved against the checkpoint's tree
// as it is read), decodes it, checks its signature, and reports it. A log
// that does not extend the pin (smaller, another root at the same size,
// no consistency) is ErrInconsistent: its history was rewritten or rolled
// back, and the pin is kept as the evidence.
package logmonitor

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"filippo.io/torchwood"
	formats "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// DefaultMaxAge is how old the witnesses' cosignatures may be: a custody
// server refreshes them hourly even when its log does not grow.
const DefaultMaxAge = 24 * time.Hour

var (
	// ErrInconsistent is returned when the log does not extend the pinned
	// checkpoint: its history was rewritten or rolled back.
	ErrInconsistent = errors.New("the log does not extend the pinned checkpoint")
	// ErrBadEntry is returned when an entry does not decode, its
	// signature does not verify, or a bundle does not match the tree.
	ErrBadEntry = errors.New("a log entry does not verify")
	// ErrNotWitnessed is returned when the checkpoint carries too few
	// recent valid cosignatures of the given witnesses.
	ErrNotWitnessed = errors.New("the checkpoint is not witnessed as required")
)

// Options configure a Monitor. URL and VerifierKey are required.
type Options struct {
	// URL is the log's C2SP tlog-tiles prefix (https://server/log/<ID>).
	URL string
	// VerifierKey is the log's verifier key (a C2SP vkey whose name is
	// the log's origin).
	VerifierKey string
	// Witnesses are the verifier keys of witnesses whose cosignatures
	// count; MinWitnesses of them (default: all) must have cosigned each
	// checkpoint within MaxAge (default DefaultMaxAge; negative: any age).
	Witnesses    []string
	MinWitnesses int
	MaxAge       time.Duration
	// Token, if set, is the bearer token of an admin or auditor of the
	// log's tenant: with it, the entries are read from the entry bundles;
	// without, only the checkpoints and the tree are checked.
	Token      string
	HTTPClient *http.Client
	Now        func() time.Time
}

// Event is what a Step reports: a new checkpoint, or a new entry.
type Event struct {
	Checkpoint *Checkpoint `json:"checkpoint,omitempty"`
	Index      int64       `json:"index"`
	Entry      *Entry      `json:"entry,omitempty"`
}

// Checkpoint is a verified checkpoint.
type Checkpoint struct {
	Origin    string   `json:"origin"`
	Size      int64    `json:"size"`
	Root      string   `json:"root"` // base64
	Witnesses []string `json:"witnesses,omitempty"`
	note      []byte
	tree      tlog.Tree
}

// Monitor follows one log; see the package comment. It is not safe for
// concurrent use.
type Monitor struct {
	opts      Options
	verifier  note.Verifier
	witnesses []note.Verifier
	pin       *Checkpoint
	signers   *Signers
	learned   int64 // entries read so far (their keys learned)
	fetcher   *torchwood.TileFetcher
	anon      *torchwood.TileFetcher
}

// New returns a monitor of the log, holding it to pinned (a checkpoint
// note verified earlier; empty for none).
func New(opts Options, pinned []byte) (*Monitor, error) {
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: time.Minute}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxAge == 0 {
		opts.MaxAge = DefaultMaxAge
	}
	opts.URL = strings.TrimSuffix(opts.URL, "/")
	v, err := note.NewVerifier(strings.TrimSpace(opts.VerifierKey))
	if err != nil {
		return nil, fmt.Errorf("the log's verifier key %q: %w (origin+hash+base64, as custody log list prints it)", opts.VerifierKey, err)
	}
	server, err := serverKey(opts.VerifierKey)
	if err != nil {
		return nil, err
	}
	m := &Monitor{opts: opts, verifier: v, signers: NewSigners(server)}
	for _, w := range opts.Witnesses {
		wv, err := formats.NewVerifierForCosignatureV1(strings.TrimSpace(w))
		if err != nil {
			return nil, fmt.Errorf("witness key %q: %w", w, err)
		}
		m.witnesses = append(m.witnesses, wv)
	}
	if m.opts.MinWitnesses <= 0 {
		m.opts.MinWitnesses = len(m.witnesses)
	}
	if m.opts.MinWitnesses > len(m.witnesses) {
		return nil, fmt.Errorf("%d witnesses required, of the %d witness keys given", m.opts.MinWitnesses, len(m.witnesses))
	}
	client := opts.HTTPClient
	if opts.Token != "" {
		client = &http.Client{Timeout: client.Timeout, Transport: bearer{opts.Token, client.Transport}}
	}
	if m.fetcher, err = torchwood.NewTileFetcher(opts.URL, torchwood.WithHTTPClient(client)); err != nil {
		return nil, err
	}
	if m.anon, err = torchwood.NewTileFetcher(opts.URL, torchwood.WithHTTPClient(opts.HTTPClient)); err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(pinned)) > 0 {
		cp, err := m.open(pinned, false)
		if err != nil {
			return nil, fmt.Errorf("the pinned checkpoint: %w", err)
		}
		m.pin = cp
	}
	return m, nil
}

// serverKey is the Ed25519 key of a vkey name+hash+base64(0x01 ‖ key)
// (the name holds no "+", the base64 may).
func serverKey(vkey string) (ed25519.PublicKey, error) {
	parts := strings.SplitN(strings.TrimSpace(vkey), "+", 3)
	if len(parts) != 3 {
		return nil, fmt.Errorf("the log's verifier key %q is not name+hash+key", vkey)
	}
	b, err := base64.StdEncoding.DecodeString(parts[2])
	if err != nil || len(b) != 1+ed25519.PublicKeySize || b[0] != 1 {
		return nil, fmt.Errorf("the log's verifier key %q does not hold an Ed25519 key", vkey)
	}
	return ed25519.PublicKey(b[1:]), nil
}

// Pinned is the pinned checkpoint's note, nil before the first.
func (m *Monitor) Pinned() []byte {
	if m.pin == nil {
		return nil
	}
	return bytes.Clone(m.pin.note)
}

// open verifies msg: the log's signature and origin, and when witnessed,
// the cosignatures the options ask for.
func (m *Monitor) open(msg []byte, witnessed bool) (*Checkpoint, error) {
	n, err := note.Open(msg, note.VerifierList(m.verifier))
	if err != nil {
		return nil, fmt.Errorf("the checkpoint does not verify under the log's key: %w", err)
	}
	tc, err := torchwood.ParseCheckpoint(n.Text)
	if err != nil {
		return nil, err
	}
	if tc.Origin != m.verifier.Name() {
		return nil, fmt.Errorf("the checkpoint's origin is %q, the log's key names %q", tc.Origin, m.verifier.Name())
	}
	cp := &Checkpoint{Origin: tc.Origin, Size: tc.N, Root: tc.Hash.String(), note: bytes.Clone(msg), tree: tc.Tree}
	if !witnessed || len(m.witnesses) == 0 {
		return cp, nil
	}
	notBefore := time.Time{}
	if m.opts.MaxAge > 0 {
		notBefore = m.opts.Now().Add(-m.opts.MaxAge)
	}
	text, sigs, _ := bytes.Cut(msg, []byte("\n\n"))
	var missing []string
	for _, w := range m.witnesses {
		ok := false
		for _, line := range strings.SplitAfter(string(sigs), "\n") {
			if !strings.HasPrefix(line, "— "+w.Name()+" ") {
				continue
			}
			wn, err := note.Open([]byte(string(text)+"\n\n"+line), note.VerifierList(w))
			if err != nil || len(wn.Sigs) != 1 {
				continue
			}
			at, err := formats.CoSigV1Timestamp(wn.Sigs[0])
			if err == nil && !at.Before(notBefore) {
				ok = true
				break
			}
		}
		if ok {
			cp.Witnesses = append(cp.Witnesses, w.Name())
		} else {
			missing = append(missing, w.Name())
		}
	}
	if len(cp.Witnesses) < m.opts.MinWitnesses {
		return nil, fmt.Errorf("%w: %d of the %d required witnesses cosigned it within %v (none from %s)", ErrNotWitnessed,
			len(cp.Witnesses), m.opts.MinWitnesses, m.opts.MaxAge, strings.Join(missing, ", "))
	}
	return cp, nil
}

// Step fetches the log's checkpoint and, if it moved past the pin, checks
// that it extends the pin and reads the new entries (with a token),
// calling report for the checkpoint and each entry; then pins it. An error
// wrapping ErrInconsistent, ErrBadEntry or ErrNotWitnessed leaves the pin
// as it was.
func (m *Monitor) Step(ctx context.Context, report func(Event)) error {
	msg, err := m.fetchCheckpoint(ctx)
	if err != nil {
		return err
	}
	cp, err := m.open(msg, true)
	if err != nil {
		return err
	}
	old := m.pin
	switch {
	case old == nil:
	case cp.Size < old.Size:
		return fmt.Errorf("%w: the log has %d entries, fewer than the %d of the pinned checkpoint (it was rolled back or truncated)", ErrInconsistent, cp.Size, old.Size)
	case cp.Size == old.Size && cp.Root != old.Root:
		return fmt.Errorf("%w: at %d entries the log has the root %s, the pinned checkpoint %s (its history was rewritten)", ErrInconsistent, cp.Size, cp.Root, old.Root)
	case cp.Size > old.Size:
		hr := torchwood.TileHashReaderWithContext(ctx, cp.tree, m.anon)
		proof, err := tlog.ProveTree(cp.Size, old.Size, hr)
		if err != nil {
			return fmt.Errorf("%w: no consistency proof from %d to %d entries can be read from the tiles: %w", ErrInconsistent, old.Size, cp.Size, err)
		}
		if err := tlog.CheckTree(proof, cp.Size, cp.tree.Hash, old.Size, old.tree.Hash); err != nil {
			return fmt.Errorf("%w: the log of %d entries does not extend the pinned one of %d (its history was rewritten): %w", ErrInconsistent, cp.Size, old.Size, err)
		}
	}
	from := int64(0)
	if old != nil {
		from = old.Size
	}
	if old == nil || cp.Size > old.Size {
		report(Event{Checkpoint: cp, Index: cp.Size})
	}
	if m.opts.Token != "" {
		if err := m.read(ctx, cp, from, report); err != nil {
			return err
		}
	}
	m.pin = cp
	return nil
}

// fetchCheckpoint gets the log's checkpoint once: a server that does not
// answer is reported at once (the caller looks again later), where the
// tile reads retry.
func (m *Monitor) fetchCheckpoint(ctx context.Context) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", m.opts.URL+"/checkpoint", nil)
	if err != nil {
		return nil, fmt.Errorf("the log's URL %q: %w", m.opts.URL, err)
	}
	res, err := m.opts.HTTPClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching the checkpoint: %w (is the server up, and the URL the one custody log list prints?)", err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, maxCheckpointBytes+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("fetching the checkpoint: %w", err)
	case res.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("fetching the checkpoint: %s answered %s (is the server up, and the URL the one custody log list prints?)", req.URL, res.Status)
	case len(b) > maxCheckpointBytes:
		return nil, fmt.Errorf("the checkpoint at %s is over %d bytes: not a checkpoint of this log", req.URL, maxCheckpointBytes)
	}
	return b, nil
}

// maxCheckpointBytes bounds a checkpoint note: its text and a few dozen
// signature lines.
const maxCheckpointBytes = 64 << 10

// read reads the entries up to cp's size from the bundles, each proved in
// cp's tree, decodes and checks them, and reports those from from on
// (those before only teach the signers their keys).
func (m *Monitor) read(ctx context.Context, cp *Checkpoint, from int64, report func(Event)) error {
	client, err := torchwood.NewClient(m.fetcher)
	if err != nil {
		return err
	}
	for m.learned < cp.Size {
		before := m.learned
		for i, leaf := range client.Entries(ctx, cp.tree, m.learned) {
			if i != m.learned {
				return fmt.Errorf("the bundles gave entry %d where %d was expected", i, m.learned)
			}
			e, err := DecodeLeaf(leaf)
			if err != nil {
				return fmt.Errorf("%w: entry %d: %w", ErrBadEntry, i, err)
			}
			if err := m.signers.Check(e); err != nil {
				return fmt.Errorf("%w: entry %d (%s): %w", ErrBadEntry, i, e.Transition, err)
			}
			m.learned++
			if i >= from {
				report(Event{Index: i, Entry: e})
			}
		}
		if err := client.Err(); err != nil {
			if servedWrong(err) {
				return fmt.Errorf("%w: an entry bundle does not match the log's tree (the server shows other entries than it committed to): %w", ErrBadEntry, err)
			}
			return fmt.Errorf("reading the entries from the bundles: %w", err)
		}
		if m.learned == before {
			return fmt.Errorf("the bundles gave no entry from %d of the %d the checkpoint covers", before, cp.Size)
		}
	}
	return nil
}

// servedWrong reports whether err of torchwood's Client is a bundle the
// server served that does not match the tree it proved (as opposed to
// one it could not serve): a leaf whose hash is not the tree's, a bundle
// short of or past its entries.
func servedWrong(err error) bool {
	msg := err.Error()
	for _, s := range []string{"hash mismatch for entry", "unexpected end of tile data", "unexpected leftover data", "failed to cut entry"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// bearer adds a bearer token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	next := b.next
	if next == nil {
		next = http.DefaultTransport
	}
	return next.RoundTrip(r)
}
