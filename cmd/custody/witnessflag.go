package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
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

// parseWitnesses parses serve's --witness flags.
func parseWitnesses(flags []string) ([]witness.Witness, error) {
	var ws []witness.Witness
	for _, f := range flags {
		w, err := witness.Parse(f)
		if err != nil {
			return nil, usageError{err.Error()}
		}
		ws = append(ws, w)
	}
	return ws, nil
}

// startWitnessing starts the pusher of serve's witnesses, nil when there
// are none. The store must keep witness states (both backends do).
func startWitnessing(ctx context.Context, svc *custody.Service, ws []witness.Witness, logger *slog.Logger) (*witness.Pusher, error) {
	if len(ws) == 0 {
		return nil, nil
	}
	st, ok := svc.Store().(witness.Store)
	if !ok {
		return nil, fmt.Errorf("this store keeps no witness cosignatures; --witness needs the SQLite or PostgreSQL store")
	}
	return witness.Start(ctx, witness.Options{Witnesses: ws, Log: svc.TreeLogs(), Store: st, Logger: logger, PollInterval: time.Second}), nil
}

// verifyWitnesses is verify's --witness and --min-witnesses.
type verifyWitnesses struct {
	keys listFlag
	min  int
}

func (v *verifyWitnesses) register(fs *flag.FlagSet) {
	fs.Var(&v.keys, "witness", "require cosignatures of the witness of verifier key `VKEY` on the latest checkpoint (repeatable); as URL=VKEY, also ask the witness itself, which refuses a rewritten or rolled-back log")
	fs.IntVar(&v.min, "min-witnesses", 0, "how many of the --witness keys must have cosigned the latest checkpoint (default: all of them)")
}

// check fails unless the latest checkpoint of each log carries valid
// cosignatures of at least min of the witnesses: a history rewritten by
// someone holding the server key has checkpoints no honest witness
// cosigned.
func (v *verifyWitnesses) check(ctx context.Context, svc *custody.Service) error {
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
