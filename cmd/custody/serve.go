package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/console"
	"github.com/custody-mem/custody/httpapi"
	"github.com/custody-mem/custody/mcpserver"
	"github.com/custody-mem/custody/mem0api"
	"github.com/custody-mem/custody/sqlite"
)

// Defaults of serve.
const (
	DefaultAddr               = "127.0.0.1:8765"
	DefaultCheckpointEvery    = 1000
	DefaultCheckpointInterval = 10 * time.Second
	DefaultSweepInterval      = time.Hour
)

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sf storeFlags
	sf.register(fs)
	sf.registerPolicy(fs)
	addr := fs.String("addr", DefaultAddr, "listen `address` (host:port)")
	every := fs.Uint64("checkpoint-every", DefaultCheckpointEvery, "sign a checkpoint at least every `n` log entries")
	interval := fs.Duration("checkpoint-interval", DefaultCheckpointInterval, "sign a checkpoint at least this often when the log grew")
	bodyLimit := fs.Int64("body-limit", httpapi.DefaultMaxBodyBytes, "largest request body in `bytes`")
	hookURL := fs.String("review-webhook", "", "POST a signed notice (HMAC-SHA256 with $"+reviewWebhookSecretEnv+", header "+console.SignatureHeader+") to this `URL` each time a candidate is held for review")
	acceptRollback := fs.Bool("accept-rollback", false, "start even though the store's log is behind or disagrees with the last checkpoint this server published (its checkpoint file), as after restoring an older backup on purpose; the file is then replaced by a checkpoint of the store as it is")
	gw := fs.String("gateway", "", gatewayUsage)
	fs.DurationVar(&sf.readRetention, "read-retention", custody.DefaultReadRetention, "how long the ids a session's reads returned are kept for the impact of a repair (custody impact); older ones are pruned")
	var ef embedderFlags
	ef.register(fs)
	var cf connFlags
	cf.register(fs)
	rateLimit := fs.Float64("rate-limit", httpapi.DefaultRatePerSecond, "each principal's sustained `requests` per second; beyond it and the burst, 429 with Retry-After (0: no limit)")
	rateBurst := fs.Int("rate-burst", httpapi.DefaultRateBurst, "how many `requests` a principal may send at once before the rate applies")
	searchMiB := fs.Int64("search-memory", sqlite.DefaultSearchMemory>>20, "the `MiB` the copy of the search index in memory may hold (about 200 bytes a record; with --postgres, this server's copies of the tenants' search terms); past it, or with 0, FTS5 (or ts_rank_cd) ranks every search, more slowly on a large store")
	witnesses := serveWitnesses(fs)
	policyFile := policyFlag(fs, "that a checkpoint must carry to be served as current (/log/<ID>/checkpoint, GET /v1/log/checkpoint); its witnesses with a URL are sent every checkpoint (as --witness)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: custody serve [--db FILE | --postgres DSN] [--addr HOST:PORT] [--policy FILE]\n\n"+
			"Runs the HTTP API (and MCP at /mcp) on an embedded SQLite store, or on PostgreSQL.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	perSecond, err := rateOptions(*rateLimit, *rateBurst)
	if err != nil {
		return err
	}
	if *searchMiB < 0 {
		return usageError{fmt.Sprintf("--search-memory %d must be 0 (no copy in memory) or a number of MiB", *searchMiB)}
	}
	sf.searchMemory = *searchMiB << 20
	if *searchMiB == 0 {
		sf.searchMemory = -1
	}
	if sf.readRetention <= 0 {
		return usageError{fmt.Sprintf("--read-retention %v must be positive (the default is %v)", sf.readRetention, custody.DefaultReadRetention)}
	}
	policy, err := readPolicy(*policyFile)
	if err != nil {
		return err
	}
	wits, err := parseWitnesses(*witnesses, policy)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	hook, err := reviewWebhook(*hookURL, logger)
	if err != nil {
		return err
	}
	if sf.embedder, err = ef.embedder(); err != nil {
		return err
	}
	sf.namedInBanner = true
	svc, st, err := sf.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer st.Close()
	prepareSearch(st)
	defer startEmbedding(svc, logger).Close() // before the store closes
	accepted, err := checkPublished(ctx, svc, sf, *acceptRollback, stderr)
	if err != nil {
		return err
	}
	if err := askWitnesses(ctx, svc, wits, *acceptRollback, stderr); err != nil {
		return err
	}
	first := svc.CheckpointAll
	if accepted {
		first = svc.AcceptRollback
	}
	if _, err := first(ctx); err != nil {
		return fmt.Errorf("signing the first checkpoint: %w", err)
	}
	api := httpapi.New(svc, cf.options(httpapi.Options{Logger: logger, MaxBodyBytes: *bodyLimit, RatePerSecond: perSecond, RateBurst: *rateBurst, WitnessPolicy: policy}))
	g, err := startGateway(ctx, *gw, logger, stderr)
	if err != nil {
		return err
	}
	if g != nil {
		defer g.Close()
	}
	mcpSrv := mcpserver.New(svc, mcpserver.Options{Logger: logger, Principal: httpapi.PrincipalFrom, Gateway: g})
	api.Mount("/mcp", mcpSrv.HTTPHandler())
	m0 := mem0api.New(svc, mem0api.Options{Principal: httpapi.PrincipalFrom, WriteError: api.WriteError})
	api.Mount(mem0api.Prefix+"/", http.StripPrefix(mem0api.Prefix, m0.Handler()))
	api.MountPublic(console.Prefix, console.Handler())
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w (is another custody running? choose another --addr)", *addr, err)
	}
	ln = api.Listener(ln) // the per-address connection cap
	srv := api.HTTPServer()
	srv.RegisterOnShutdown(mcpSrv.Close) // ends the MCP event streams
	url := "http://" + ln.Addr().String()
	vkey, err := svc.VerifierKey("acme")
	if err != nil {
		return err
	}
	greet(stderr, url, sf.where(), sf.flagArg(), svc.LogName(), vkey)

	bg, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); checkpointLoop(bg, svc, *every, *interval, logger) }()
	go func() { defer wg.Done(); sweepLoop(bg, svc, logger) }()
	startReviewWebhook(bg, svc, hook, &wg)
	pusher, err := startWitnessing(bg, svc, wits, policy, logger)
	if err != nil {
		cancel()
		wg.Wait()
		return err
	}
	if pusher != nil {
		defer pusher.Close()
	}

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err = <-errc:
	case <-ctx.Done():
		logger.Info("shutting down: letting in-flight requests finish")
		sctx, scancel := context.WithTimeout(context.Background(), 30*time.Second)
		err = srv.Shutdown(sctx)
		scancel()
	}
	cancel()
	wg.Wait()
	if _, cerr := svc.CheckpointAll(context.Background()); cerr != nil {
		logger.Warn("final checkpoint", "err", cerr)
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// checkPublished refuses a store whose log is behind or disagrees with
// the checkpoint file (the last checkpoint this server published), unless
// accept, in which case it reports that it accepted one; and warns when
// the file is missing on a log that has entries.
func checkPublished(ctx context.Context, svc *custody.Service, sf storeFlags, accept bool, stderr io.Writer) (accepted bool, err error) {
	p, err := svc.CheckPublished(ctx)
	if other := sf.otherStoreFile(); errors.Is(err, custody.ErrRolledBack) && other != "" {
		err = fmt.Errorf("%w\n%s", err, other)
	}
	switch {
	case errors.Is(err, custody.ErrOtherStore):
		return false, fmt.Errorf("refusing to start: %w", err)
	case errors.Is(err, custody.ErrRolledBack) && accept:
		fmt.Fprintf(stderr, "custody serve: WARNING: starting as --accept-rollback says, although %v\n"+
			"The checkpoint file is now replaced by a checkpoint of the store as it is.\n\n", err)
		return true, nil
	case errors.Is(err, custody.ErrRolledBack):
		return false, fmt.Errorf("refusing to start: %w\n\n"+
			"Someone may have rolled the database back to an older copy to undo changes the log recorded.\n"+
			"If you restored an older backup on purpose (or moved the store without its checkpoint file), check it\n"+
			"against a checkpoint saved elsewhere with\n"+
			"  custody verify %s --checkpoint FILE\n"+
			"and start once with --accept-rollback. Otherwise keep the server stopped, restore the newest backup\n"+
			"that matches the checkpoint file, and find out who changed the store (see docs/operations.md).", err, sf.flagArg())
	case err != nil:
		return false, fmt.Errorf("checking the store against its checkpoint file: %w", err)
	}
	if p.Missing && p.LogSize > 0 {
		fmt.Fprintf(stderr, "custody serve: WARNING: no checkpoint file at %s, and the store's log has %d entries but no\n"+
			"checkpoint signed by this server: a rollback of this store before now could not be noticed. Starting, and\n"+
			"publishing a first checkpoint; keep copies of it elsewhere (custody log checkpoint --pin FILE).\n\n", p.File, p.LogSize)
	}
	return false, nil
}

// rateOptions checks --rate-limit and --rate-burst and gives the rate for
// httpapi.Options, where 0 would mean the default: no limit is -1 there.
func rateOptions(perSecond float64, burst int) (float64, error) {
	switch {
	case perSecond < 0 || perSecond != perSecond:
		return 0, usageError{fmt.Sprintf("--rate-limit %v must be 0 (no limit) or a positive number of requests per second", perSecond)}
	case burst < 1:
		return 0, usageError{fmt.Sprintf("--rate-burst %d must be at least 1", burst)}
	case perSecond == 0:
		return -1, nil
	}
	return perSecond, nil
}

func greet(w io.Writer, url, where, storeArg, logName, verifierKey string) {
	fmt.Fprintf(w, `custody is serving on %[1]s (store %[2]s)

Create a principal and make a first call (in another terminal):

  TOKEN=$(go run ./cmd/custody principal add %[3]s --tenant acme --name alice --role user)
  curl -s -H "Authorization: Bearer $TOKEN" %[1]s/v1/memories \
    -d '{"namespace":"prefs","key":"tone","class":"preference","body":"short answers","channel":"user"}'
  curl -s -H "Authorization: Bearer $TOKEN" %[1]s/v1/search -d '{"query":"answers"}'

API description: %[1]s/v1/openapi.json · review console: %[1]s/console/ · metrics: %[1]s/metrics · stop with Ctrl-C
Log name %[4]s: each tenant's log is a tree of its own, with the origin %[4]s/<tenant>
and its own verifier key; acme's (custody log key --tenant NAME %[3]s prints any tenant's;
pin a log with custody log checkpoint --pin FILE --verifier KEY):
  %[5]s

`, url, where, storeArg, logName, verifierKey)
}

// checkpointLoop signs a checkpoint of each tenant's log when it grew by
// every entries, or interval passed and it grew.
func checkpointLoop(ctx context.Context, svc *custody.Service, every uint64, interval time.Duration, logger *slog.Logger) {
	tick := time.NewTicker(min(interval, time.Second))
	defer tick.Stop()
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		growth := every
		if time.Since(last) >= interval {
			growth, last = 1, time.Now()
		}
		if _, err := svc.CheckpointGrown(ctx, growth); err != nil {
			logger.Warn("checkpoint", "err", err)
		}
	}
}

// sweepLoop rejects review items that waited past the review time and
// prunes the session reads past the read retention.
func sweepLoop(ctx context.Context, svc *custody.Service, logger *slog.Logger) {
	tick := time.NewTicker(DefaultSweepInterval)
	defer tick.Stop()
	for {
		if ids, err := svc.Sweep(ctx); err != nil {
			logger.Warn("review sweep", "err", err)
		} else if len(ids) > 0 {
			logger.Info("review sweep rejected expired items", "count", len(ids))
		}
		if _, err := svc.PruneReads(ctx); err != nil {
			logger.Warn("pruning session reads", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
