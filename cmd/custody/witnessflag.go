package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/witness"
	"golang.org/x/mod/sumdb/note"
)

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// serveWitnesses is serve's --witness: the witnesses to push checkpoints to.
func serveWitnesses(fs *flag.FlagSet) *listFlag {
	var l listFlag
	fs.Var(&l, "witness", "push each new checkpoint, with its consistency proof, to the C2SP tlog-witness at `URL=VKEY` (its submission URL and verifier key; repeatable); its cosignatures are served with the checkpoint")
	return &l
}

// policyFlag is the --witness-policy of serve, verify and log checkpoint.
func policyFlag(fs *flag.FlagSet, what string) *string {
	return fs.String("witness-policy", "", "C2SP tlog-policy `file`: the witnesses (name, verifier key, optional URL) and the quorum of their cosignatures "+what)
}

// readPolicy reads a --witness-policy file; nil for "".
func readPolicy(path string) (*witness.Policy, error) {
	if path == "" {
		return nil, nil
	}
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the witness policy: %w", err)
	}
	p, err := witness.ParsePolicy(text)
	if err != nil {
		return nil, fmt.Errorf("witness policy %s: %w (the format is C2SP tlog-policy: witness NAME VKEY [URL] lines, group lines, one quorum line)", path, err)
	}
	return p, nil
}

// parseWitnesses parses serve's --witness flags, and adds the witnesses of
// policy that have a URL: every witness to send checkpoints to, once each.
func parseWitnesses(flags []string, policy *witness.Policy) ([]witness.Witness, error) {
	var ws []witness.Witness
	seen := map[string]bool{}
	for _, f := range flags {
		w, err := witness.Parse(f)
		if err != nil {
			return nil, usageError{err.Error()}
		}
		if !seen[w.VKey] {
			seen[w.VKey] = true
			ws = append(ws, w)
		}
	}
	if policy != nil {
		for _, w := range policy.Pushed() {
			if !seen[w.VKey] {
				seen[w.VKey] = true
				ws = append(ws, w)
			}
		}
		if !policy.None() && len(ws) == 0 {
			return nil, usageError{"the witness policy has a quorum but none of its witnesses has a URL, and no --witness was given: no checkpoint would ever be cosigned; give each witness's submission URL on its witness line, or --witness URL=VKEY"}
		}
	}
	return ws, nil
}

// startWitnessing starts the pusher of serve's witnesses, nil when there
// are none. The store must keep witness states (both backends do).
func startWitnessing(ctx context.Context, svc *custody.Service, ws []witness.Witness, policy *witness.Policy, logger *slog.Logger) (*witness.Pusher, error) {
	if len(ws) == 0 {
		return nil, nil
	}
	st, ok := svc.Store().(witness.Store)
	if !ok {
		return nil, fmt.Errorf("this store keeps no witness cosignatures; --witness needs the SQLite or PostgreSQL store")
	}
	pub, _ := svc.Store().(witness.Published)
	if !policy.None() && pub == nil {
		return nil, fmt.Errorf("this store keeps no published checkpoints; --witness-policy needs the SQLite or PostgreSQL store")
	}
	return witness.Start(ctx, witness.Options{Witnesses: ws, Log: svc.TreeLogs(), Store: st, Policy: policy, Published: pub, Logger: logger, PollInterval: time.Second}), nil
}

// askWitnesses asks each witness, before the server publishes anything,
// what it holds of each tenant's log: the log as it is is sent to it (a
// witness that saw more answers 409 with its size; one that saw another
// history, 422). A witness that cosigned a larger tree than the store
// holds, or another history, is a rollback or a rewrite the checkpoint
// file cannot show when it was rolled back too: serve refuses to start,
// unless accept (--accept-rollback), when it warns. A witness that cannot
// be asked (down, or not told of the log) is a warning: serving does not
// depend on witnesses being up.
func askWitnesses(ctx context.Context, svc *custody.Service, ws []witness.Witness, accept bool, stderr io.Writer) error {
	if len(ws) == 0 {
		return nil
	}
	st, ok := svc.Store().(witness.Store)
	if !ok {
		return nil
	}
	tenants, err := svc.Store().LogTenants(ctx)
	if err != nil {
		return err
	}
	asker := witness.Start(ctx, witness.Options{Log: svc.TreeLogs(), Store: st, Logger: slog.New(slog.DiscardHandler)})
	defer asker.Close()
	down := map[string]bool{}
	unknown := map[string]int{}
	var refused []string
	for _, t := range tenants {
		msg, err := svc.SignTree(ctx, t)
		if errors.Is(err, custody.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		for _, w := range ws {
			if down[w.VKey] {
				continue
			}
			err := asker.Ask(ctx, w, msg)
			var ue *url.Error
			switch {
			case err == nil:
			case errors.Is(err, witness.ErrAhead), errors.Is(err, witness.ErrInconsistent):
				refused = append(refused, fmt.Sprintf("the witness %s (%s), asked about %s's log: %v", w.Verifier.Name(), w.URL, t, err))
			case errors.As(err, &ue):
				down[w.VKey] = true
				fmt.Fprintf(stderr, "custody serve: WARNING: the witness %s (%s) could not be asked what it holds of the logs: %v\n"+
					"A rollback it could have shown is not checked at this start.\n", w.Verifier.Name(), w.URL, err)
			case errors.Is(err, witness.ErrUnknownLog):
				unknown[w.VKey]++
			default:
				fmt.Fprintf(stderr, "custody serve: WARNING: the witness %s (%s), asked about %s's log: %v\n", w.Verifier.Name(), w.URL, t, err)
			}
		}
	}
	for _, w := range ws {
		if n := unknown[w.VKey]; n > 0 {
			fmt.Fprintf(stderr, "custody serve: WARNING: the witness %s (%s) does not know %d of the tenants' logs (404): give it custody log list\n", w.Verifier.Name(), w.URL, n)
		}
	}
	if len(refused) == 0 {
		return nil
	}
	what := strings.Join(refused, "\n  ")
	if accept {
		fmt.Fprintf(stderr, "custody serve: WARNING: starting as --accept-rollback says, although\n  %s\n"+
			"That witness will refuse this log's checkpoints from now on: it never takes a log back.\n\n", what)
		return nil
	}
	return fmt.Errorf("refusing to start: a witness cosigned more of a log than the store holds, or another history:\n  %s\n\n"+
		"The store (with its checkpoint file) was rolled back behind what the witness saw, or its history was rewritten.\n"+
		"If you restored an older backup on purpose, start once with --accept-rollback (the witness will refuse the\n"+
		"rolled-back log from then on). Otherwise keep the server stopped, restore the newest backup, and find out who\n"+
		"changed the store (see docs/operations.md, Rollback).", what)
}

// verifyWitnesses is verify's --witness, --min-witnesses and
// --witness-policy.
type verifyWitnesses struct {
	keys       listFlag
	min        int
	policyFile *string
}

func (v *verifyWitnesses) register(fs *flag.FlagSet) {
	fs.Var(&v.keys, "witness", "require cosignatures of the witness of verifier key `VKEY` on the latest checkpoint (repeatable); as URL=VKEY, also ask the witness itself, which refuses a rewritten or rolled-back log")
	fs.IntVar(&v.min, "min-witnesses", 0, "how many of the --witness keys must have cosigned the latest checkpoint (default: all of them)")
	v.policyFile = policyFlag(fs, "that each log's published checkpoint must meet; its witnesses with a URL are asked what they hold, as --witness URL=VKEY")
}

// publishedNotes are the published checkpoints of the store's logs (those
// that met the witness policy of a server), for verify to check against
// the trees it recomputes.
func publishedNotes(ctx context.Context, svc *custody.Service) ([][]byte, error) {
	pub, ok := svc.Store().(witness.Published)
	if !ok {
		return nil, nil
	}
	tenants, err := svc.Store().LogTenants(ctx)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for _, t := range tenants {
		note, err := pub.PublishedCheckpoint(ctx, svc.LogOrigin(t))
		if err != nil {
			return nil, err
		}
		if note != nil {
			out = append(out, note)
		}
	}
	return out, nil
}

// check fails unless the latest checkpoint of each log carries valid
// cosignatures of at least min of the witnesses: a history rewritten by
// someone holding the server key has checkpoints no honest witness
// cosigned. With a policy, each log's published checkpoint must meet it.
func (v *verifyWitnesses) check(ctx context.Context, svc *custody.Service) error {
	policy, err := readPolicy(*v.policyFile)
	if err != nil {
		return err
	}
	if policy != nil {
		if err := v.checkPolicy(ctx, svc, policy); err != nil {
			return err
		}
	}
	if len(v.keys) == 0 {
		if v.min > 0 {
			return usageError{"--min-witnesses needs the witnesses' keys: give --witness VKEY for each"}
		}
		return nil
	}
	k := v.min
	if k <= 0 {
		k = len(v.keys)
	}
	if k > len(v.keys) {
		return usageError{fmt.Sprintf("--min-witnesses %d is more than the %d --witness keys given", k, len(v.keys))}
	}
	var vs []note.Verifier
	var ask []witness.Witness // those given with their URL
	for _, key := range v.keys {
		if u, _, ok := strings.Cut(key, "="); ok && (strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://")) {
			w, err := witness.Parse(key)
			if err != nil {
				return usageError{err.Error()}
			}
			vs, ask = append(vs, w.Verifier), append(ask, w)
			continue
		}
		w, err := witness.NewVerifier(key)
		if err != nil {
			return usageError{err.Error()}
		}
		vs = append(vs, w)
	}
	stored, ok := svc.Store().(witness.Store)
	if !ok {
		return fmt.Errorf("this store keeps no witness cosignatures")
	}
	// What verify learns from the witnesses it asks stays in memory: verify
	// does not write to the store.
	st := &overlayStore{Store: stored, saved: map[string]witness.State{}}
	notes, err := svc.TreeLogs().Checkpoints(ctx)
	if err != nil {
		return err
	}
	if len(notes) == 0 {
		return fmt.Errorf("the store holds no checkpoint for the witnesses to have cosigned: start custody serve with --witness first")
	}
	asker := witness.Start(ctx, witness.Options{Log: svc.TreeLogs(), Store: st, Logger: slog.New(slog.DiscardHandler)})
	defer asker.Close()
	for _, msg := range notes {
		origin, size, err := witness.Header(msg)
		if err != nil {
			return err
		}
		for _, w := range ask {
			if err := asker.Ask(ctx, w, msg); err != nil {
				return fmt.Errorf("the witness %s refused the latest checkpoint of %s (size %d): %w\n"+
					"A witness refuses a checkpoint that does not extend the last one it cosigned: the log was rewritten or rolled back",
					w.Verifier.Name(), origin, size, err)
			}
		}
		states, err := st.WitnessStates(ctx, origin)
		if err != nil {
			return err
		}
		n, missing := witness.Count(witness.AppendCosignatures(msg, states), vs)
		if n < k {
			return fmt.Errorf("the latest checkpoint of %s (size %d) has %d valid witness cosignatures of the %d required (%s).\n"+
				"A witness refuses a checkpoint that does not extend the last one it cosigned: the log may have been rewritten or rolled back.\n"+
				"If the server is running with those witnesses, it may also not have cosigned the newest checkpoint yet: run verify again in a moment",
				origin, size, n, k, strings.Join(missing, "; "))
		}
	}
	return nil
}

// checkPolicy fails unless each log's published checkpoint meets policy,
// and each of the policy's witnesses with a URL, asked with the log's
// latest checkpoint, holds nothing beyond it.
func (v *verifyWitnesses) checkPolicy(ctx context.Context, svc *custody.Service, policy *witness.Policy) error {
	pub, ok := svc.Store().(witness.Published)
	stored, ok2 := svc.Store().(witness.Store)
	if !ok || !ok2 {
		return fmt.Errorf("this store keeps no published checkpoints")
	}
	tenants, err := svc.Store().LogTenants(ctx)
	if err != nil {
		return err
	}
	st := &overlayStore{Store: stored, saved: map[string]witness.State{}}
	asker := witness.Start(ctx, witness.Options{Log: svc.TreeLogs(), Store: st, Logger: slog.New(slog.DiscardHandler)})
	defer asker.Close()
	for _, t := range tenants {
		origin := svc.LogOrigin(t)
		if !policy.None() {
			note, err := pub.PublishedCheckpoint(ctx, origin)
			if err != nil {
				return err
			}
			if note == nil {
				return fmt.Errorf("no checkpoint of %s's log (%s) has met the witness policy: a server with --witness-policy has not had one cosigned yet (run verify again in a moment), or it has never run with this policy", t, origin)
			}
			if err := policy.Met(note, time.Time{}); err != nil {
				return fmt.Errorf("the published checkpoint of %s's log (%s) does not meet the witness policy: %w", t, origin, err)
			}
		}
		latest, err := svc.TreeLogs().Checkpoint(ctx, t)
		if errors.Is(err, custody.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		for _, w := range policy.Pushed() {
			if err := asker.Ask(ctx, w, latest); err != nil {
				return fmt.Errorf("the witness %s refused the latest checkpoint of %s: %w\n"+
					"A witness refuses a checkpoint that does not extend the last one it cosigned: the log was rewritten or rolled back",
					w.Verifier.Name(), origin, err)
			}
		}
	}
	return nil
}

// overlayStore reads the store's witness states and keeps what is saved
// in memory, above them.
type overlayStore struct {
	witness.Store
	saved map[string]witness.State // origin + "\x00" + vkey
}

func (o *overlayStore) WitnessStates(ctx context.Context, origin string) (map[string]witness.State, error) {
	m, err := o.Store.WitnessStates(ctx, origin)
	if err != nil {
		return nil, err
	}
	for k, st := range o.saved {
		if o, vkey, _ := strings.Cut(k, "\x00"); o == origin {
			m[vkey] = st
		}
	}
	return m, nil
}

func (o *overlayStore) SaveWitnessState(_ context.Context, origin, vkey string, st witness.State) error {
	o.saved[origin+"\x00"+vkey] = st
	return nil
}
