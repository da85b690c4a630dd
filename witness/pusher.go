package witness

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Defaults of Options.
const (
	// DefaultPollInterval is how often the pusher looks for a new
	// checkpoint when nobody told it of one.
	DefaultPollInterval = 2 * time.Second
	// DefaultMinBackoff and DefaultMaxBackoff bound the wait before a
	// witness that failed is tried again; it doubles on each failure.
	DefaultMinBackoff = time.Second
	DefaultMaxBackoff = time.Minute
	// DefaultTimeout bounds one request to a witness.
	DefaultTimeout = 30 * time.Second
	// DefaultRefresh is how old a witness's cosignature of the newest
	// checkpoint may grow before the checkpoint is sent again for a
	// fresh one, so that a log that does not grow still shows clients
	// recent cosignatures.
	DefaultRefresh = time.Hour
)

// Log is what the pusher needs of the logs it has witnessed.
type Log interface {
	// Checkpoints returns the latest signed checkpoint of every log.
	Checkpoints(ctx context.Context) ([][]byte, error)
	// ConsistencyProof proves that the tree of size from of the log of
	// origin is a prefix of its tree of size to.
	ConsistencyProof(ctx context.Context, origin string, from, to uint64) ([][]byte, error)
}

// Options configure a Pusher. The zero value of each field means its
// default.
type Options struct {
	Witnesses []Witness
	Log       Log
	Store     Store
	// Policy, if set and not quorum none, is the witness policy: each
	// checkpoint whose cosignatures meet it is saved in Published, and
	// the witnesses are sent one checkpoint until it meets the policy or
	// every witness answered for it, so that they cosign the same one.
	Policy       *Policy
	Published    Published
	Logger       *slog.Logger // default slog.Default()
	HTTPClient   *http.Client // default one with DefaultTimeout
	PollInterval time.Duration
	MinBackoff   time.Duration
	MaxBackoff   time.Duration
	Refresh      time.Duration    // default DefaultRefresh
	Now          func() time.Time // default time.Now
}

// Pusher pushes checkpoints to witnesses in the background; see the
// package comment.
type Pusher struct {
	opts   Options
	cancel context.CancelFunc
	wg     sync.WaitGroup
	kicks  []chan struct{} // one slot per witness

	mu      sync.Mutex
	targets map[string]*target // by origin, under a policy
}

// target is the checkpoint of a log the witnesses are sent until it met
// the policy or each of them answered for it.
type target struct {
	msg      []byte
	size     uint64
	answered map[string]bool // by witness vkey
	met      bool
}

// Start starts one goroutine per witness; Close stops them.
func Start(ctx context.Context, opts Options) *Pusher {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: DefaultTimeout}
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = DefaultMinBackoff
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = DefaultMaxBackoff
	}
	if opts.Refresh <= 0 {
		opts.Refresh = DefaultRefresh
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	ctx, cancel := context.WithCancel(ctx)
	p := &Pusher{opts: opts, cancel: cancel, targets: map[string]*target{}}
	for _, w := range opts.Witnesses {
		kick := make(chan struct{}, 1)
		p.kicks = append(p.kicks, kick)
		p.wg.Add(1)
		go func() { defer p.wg.Done(); p.run(ctx, w, kick) }()
	}
	return p
}

// Notify tells the pusher there may be a new checkpoint. It never blocks:
// a notice already waiting stands for this one too.
func (p *Pusher) Notify() {
	for _, k := range p.kicks {
		select {
		case k <- struct{}{}:
		default:
		}
	}
}

// Close stops the pusher and waits for its goroutines.
func (p *Pusher) Close() {
	p.cancel()
	p.wg.Wait()
}

// run pushes to w until ctx ends: at each notice or poll, the latest
// checkpoint of each log it has not cosigned; after a failure, again
// after a backoff that doubles up to MaxBackoff.
func (p *Pusher) run(ctx context.Context, w Witness, kick chan struct{}) {
	backoff := time.Duration(0)
	for {
		wait := p.opts.PollInterval
		if backoff > 0 {
			wait = backoff
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-kick:
		case <-t.C:
		}
		t.Stop()
		if err := p.round(ctx, w); err != nil {
			if ctx.Err() != nil {
				return
			}
			backoff = min(max(2*backoff, p.opts.MinBackoff), p.opts.MaxBackoff)
			p.opts.Logger.Warn("witness did not cosign the checkpoint; trying again later", "witness", w.Verifier.Name(), "url", w.URL, "retry_in", backoff, "err", err)
			continue
		}
		backoff = 0
	}
}

// round pushes the latest checkpoint of every log to w (under a policy,
// the log's target).
func (p *Pusher) round(ctx context.Context, w Witness) error {
	notes, err := p.opts.Log.Checkpoints(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, latest := range notes {
		msg := p.target(latest)
		err := p.Push(ctx, w, msg)
		if ctx.Err() == nil {
			p.answered(msg, w)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// target is the checkpoint of latest's log to send: latest itself without
// a policy; under one, the log's target, which moves on to latest once it
// met the policy or every witness answered for it.
func (p *Pusher) target(latest []byte) []byte {
	if p.opts.Policy.None() {
		return latest
	}
	origin, size, err := Header(latest)
	if err != nil {
		return latest
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.targets[origin]
	if t == nil || t.size != size && (t.met || len(t.answered) >= len(p.opts.Witnesses) || size < t.size) {
		t = &target{msg: latest, size: size, answered: map[string]bool{}}
		p.targets[origin] = t
	}
	return t.msg
}

// answered records that w answered for msg, its log's target.
func (p *Pusher) answered(msg []byte, w Witness) {
	origin, size, err := Header(msg)
	if err != nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if t := p.targets[origin]; t != nil && t.size == size {
		t.answered[w.VKey] = true
	}
}

// publish saves msg, with the stored cosignatures of it, as its log's
// published checkpoint if they meet the policy.
func (p *Pusher) publish(ctx context.Context, msg []byte) error {
	if p.opts.Policy.None() || p.opts.Published == nil {
		return nil
	}
	origin, size, err := Header(msg)
	if err != nil {
		return err
	}
	states, err := p.opts.Store.WitnessStates(ctx, origin)
	if err != nil {
		return err
	}
	full := AppendCosignatures(msg, states)
	if p.opts.Policy.Met(full, time.Time{}) != nil {
		return nil
	}
	if err := p.opts.Published.SavePublished(ctx, origin, size, full); err != nil {
		return err
	}
	p.mu.Lock()
	if t := p.targets[origin]; t != nil && t.size == size {
		t.met = true
	}
	p.mu.Unlock()
	return nil
}

// stale reports whether the cosignature line sig was made more than
// Refresh ago (or cannot be read).
func (p *Pusher) stale(sig string) bool {
	fields := strings.Fields(sig)
	if len(fields) == 0 {
		return true
	}
	b, err := base64.StdEncoding.DecodeString(fields[len(fields)-1])
	if err != nil || len(b) < 12 {
		return true
	}
	at := time.Unix(int64(binary.BigEndian.Uint64(b[4:12])), 0)
	return p.opts.Now().Sub(at) > p.opts.Refresh
}

// Push has w cosign msg, a signed checkpoint, unless it holds its
// cosignature already, and stores the cosignature. A 409 (the witness
// holds another size than the store thought) is answered at once with the
// proof from the size the witness named.
func (p *Pusher) Push(ctx context.Context, w Witness, msg []byte) error {
	return p.push(ctx, w, msg, false)
}

// Ask is Push even when the store holds w's cosignature of msg already:
// what the witness holds now is asked, which is how custody verify finds a
// store rolled back behind what its witnesses saw.
func (p *Pusher) Ask(ctx context.Context, w Witness, msg []byte) error {
	return p.push(ctx, w, msg, true)
}

func (p *Pusher) push(ctx context.Context, w Witness, msg []byte, ask bool) error {
	origin, size, err := Header(msg)
	if err != nil {
		return err
	}
	states, err := p.opts.Store.WitnessStates(ctx, origin)
	if err != nil {
		return err
	}
	st := states[w.VKey]
	if st.Signature != "" && st.Cosigned == size && !ask && !p.stale(st.Signature) {
		return p.publish(ctx, msg)
	}
	for range 3 { // a 409 names the size to start from; two in a row are the witness moving under us
		if st.Size > size {
			return fmt.Errorf("%w: it holds a tree of %d entries of %s, more than the %d of this checkpoint: the store may have been rolled back", ErrAhead, st.Size, origin, size)
		}
		var proof [][]byte
		if st.Size > 0 && st.Size < size {
			if proof, err = p.opts.Log.ConsistencyProof(ctx, origin, st.Size, size); err != nil {
				return err
			}
		}
		sig, known, err := p.post(ctx, w, st.Size, proof, msg)
		if err != nil {
			return err
		}
		if sig == "" && known == st.Size { // 409 naming the size sent: at that size, another root
			return fmt.Errorf("%w: it holds a checkpoint of %s of %d entries with another root", ErrInconsistent, origin, known)
		}
		if sig == "" { // 409
			st.Size = known
			if err := p.opts.Store.SaveWitnessState(ctx, origin, w.VKey, st); err != nil {
				return err
			}
			continue
		}
		if err := Check(msg, sig, w.Verifier); err != nil {
			return err
		}
		st = State{Size: size, Cosigned: size, Signature: sig}
		if err := p.opts.Store.SaveWitnessState(ctx, origin, w.VKey, st); err != nil {
			return err
		}
		p.opts.Logger.Info("checkpoint cosigned", "witness", w.Verifier.Name(), "origin", origin, "size", size)
		return p.publish(ctx, msg)
	}
	return fmt.Errorf("the witness kept answering 409 (conflicting tree size) for %s", origin)
}

// post sends one add-checkpoint request. It returns the cosignature line
// of w, or, on 409, the tree size the witness holds.
func (p *Pusher) post(ctx context.Context, w Witness, old uint64, proof [][]byte, msg []byte) (sig string, known uint64, err error) {
	var body bytes.Buffer
	fmt.Fprintf(&body, "old %d\n", old)
	for _, h := range proof {
		body.WriteString(base64.StdEncoding.EncodeToString(h) + "\n")
	}
	body.WriteString("\n")
	body.Write(msg)
	req, err := http.NewRequestWithContext(ctx, "POST", w.URL+"/add-checkpoint", &body)
	if err != nil {
		return "", 0, err
	}
	res, err := p.opts.HTTPClient.Do(req)
	if err != nil {
		return "", 0, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	if err != nil {
		return "", 0, err
	}
	switch res.StatusCode {
	case http.StatusOK:
	case http.StatusConflict:
		n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			return "", 0, fmt.Errorf("the witness answered 409 without a tree size: %q", b)
		}
		return "", n, nil
	case http.StatusNotFound:
		return "", 0, fmt.Errorf("%w: the witness answered 404 (%s): tell it of the log (custody log list)", ErrUnknownLog, strings.TrimSpace(string(b)))
	case http.StatusUnprocessableEntity:
		return "", 0, fmt.Errorf("%w: the witness answered 422 (%s): the log does not extend the checkpoint it cosigned", ErrInconsistent, strings.TrimSpace(string(b)))
	default:
		return "", 0, fmt.Errorf("the witness answered %d: %s", res.StatusCode, strings.TrimSpace(string(b)))
	}
	prefix := "— " + w.Verifier.Name() + " "
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if strings.HasPrefix(line, prefix) && strings.HasSuffix(line, "\n") {
			return line, 0, nil
		}
	}
	return "", 0, fmt.Errorf("the witness's answer holds no cosignature of %s: %q", w.Verifier.Name(), b)
}

// sortedStates is the states in the order of their vkeys.
func sortedStates(m map[string]State) []State {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]State, len(keys))
	for i, k := range keys {
		out[i] = m[k]
	}
	return out
}
