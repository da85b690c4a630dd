package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/embed"
)

func runReindex(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("reindex", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sf storeFlags
	sf.register(fs)
	var cps checkpointFlags
	cps.register(fs)
	embeddings := fs.Bool("embeddings", false, "drop every stored vector and compute every record's vector for semantic search again, with the embedder the --embedder flags name (after a change of model), and nothing else; the built-in embedder stores none (its searches score the records' texts)")
	var ef embedderFlags
	ef.register(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: custody reindex [--db FILE] [--checkpoint FILE]...\n"+
			"       custody reindex --embeddings [--db FILE] [--embedder P ...]\n\n"+
			"Rebuilds what the store derives from the records for speed (the newest-version flags, the lineage\n"+
			"edges, the search and gate indexes) from the records, after checking, as verify does, that the\n"+
			"records and the log agree; then verifies the whole store. It is the remedy for a difference verify\n"+
			"says is in those structures. When the records themselves disagree with the log it rebuilds nothing.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *embeddings {
		return reindexEmbeddings(ctx, sf, ef, stdout, stderr)
	}
	if err := requireStore(sf); err != nil {
		return err
	}
	svc, st, err := sf.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer st.Close()
	notes, err := cps.read(sf) // the checkpoint file is named after the open store
	if err != nil {
		return err
	}
	step := "verifying"
	p := newProgress(stderr, step)
	rep, err := svc.Reindex(ctx, custody.ReindexOptions{Checkpoints: notes, Progress: func(name string, done, total uint64) {
		if name != step {
			p.done()
			p, step = newProgress(stderr, name), name
		}
		p.update(done, total)
	}})
	p.done()
	if errors.Is(err, custody.ErrRecordsDiffer) {
		return fmt.Errorf("nothing was rebuilt: %v\n%s", err, restoreAdvice)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "ok: rebuilt the indexes and lineage edges of %d records; %d log entries, %d principals and %d checkpoints agree\n",
		rep.Records, rep.Entries, rep.Principals, rep.Checkpoints)
	return nil
}

// reindexEmbeddings drops every stored vector and computes them all
// again with the embedder ef names; a static one (glove, builtin) stores none.
func reindexEmbeddings(ctx context.Context, sf storeFlags, ef embedderFlags, stdout, stderr io.Writer) error {
	var err error
	if sf.embedder, err = ef.embedder(); err != nil {
		return err
	}
	if sf.embedder == nil {
		return usageError{"--embeddings needs an embedder, not none: --embedder openai computes vectors (glove and builtin store none)"}
	}
	svc, st, err := sf.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer st.Close()
	vs, ok := st.(custody.VectorStore)
	if !ok {
		return errors.New("this store keeps no vectors")
	}
	if err := vs.DropVectors(ctx); err != nil {
		return err
	}
	if _, static := sf.embedder.(embed.Static); static {
		fmt.Fprintf(stdout, "ok: dropped every stored vector; %s stores none (its searches score the records' texts)\n", sf.embedder.Model())
		return nil
	}
	n, err := svc.EmbedPending(ctx)
	if err != nil {
		return fmt.Errorf("after %d vectors: %w (run custody reindex --embeddings again once the embedder answers; serve also catches up on its own)", n, err)
	}
	fmt.Fprintf(stdout, "ok: computed the vectors of %d records with %s\n", n, sf.embedder.Model())
	return nil
}
