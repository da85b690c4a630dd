package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/embed"
	"github.com/custody-mem/custody/postgres"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/tlog"
)

// storeFlags are the flags of every verb that opens a store directly.
type storeFlags struct {
	db         string
	postgres   string
	key        string
	origin     string
	policy     string
	sensitive  string
	reviewTTL  time.Duration
	strongEdge float64
	// readRetention is serve's --read-retention (zero elsewhere: the default).
	readRetention time.Duration
	// searchMemory is serve's --search-memory in bytes (-1: no copy; 0
	// elsewhere: the store's default), for either store.
	searchMemory int64
	embedder     embed.Embedder // semantic search (embedflags.go)
	// namedInBanner: the command's banner names the log (serve), so the
	// store's opening does not also say its new name.
	namedInBanner bool
	// logName is the store's log name, set by open.
	logName string
}

// DefaultDB is the embedded store's file unless --db says otherwise.
const DefaultDB = "custody.db"

func (f *storeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.db, "db", DefaultDB, "SQLite database `file` (created if absent)")
	fs.StringVar(&f.postgres, "postgres", os.Getenv("CUSTODY_POSTGRES"), "PostgreSQL `DSN` to use instead of SQLite (default $CUSTODY_POSTGRES)")
	fs.StringVar(&f.key, "key", "", "server key `file` that seals principal keys and signs checkpoints (default: the database path + \".key\", or custody.key with --postgres; created on first start)")
	fs.StringVar(&f.origin, "origin", "", "the installation's log `name`: tenant T's log has the origin NAME/T on the first line of its checkpoints (default: the one the store holds; a new store gets a unique one)")
}

func (f *storeFlags) registerPolicy(fs *flag.FlagSet) {
	fs.StringVar(&f.policy, "policy", "", "Cedar policy `file` (default: the embedded policy, see docs/policy.md)")
	fs.DurationVar(&f.reviewTTL, "review-ttl", custody.DefaultReviewTTL, "how long a quarantined candidate waits for review before it is rejected")
	fs.Float64Var(&f.strongEdge, "strong-edge", custody.DefaultStrongEdge, "edge `weight` from which a parent caps a derived record's authority")
	fs.StringVar(&f.sensitive, "sensitive", "", "comma-separated key `patterns` (regular expressions) whose overwrite needs confirmation (default: "+strings.Join(custody.DefaultSensitiveKeys, ",")+")")
}

func (f *storeFlags) keyPath() string {
	switch {
	case f.key != "":
		return f.key
	case f.postgres != "":
		return "custody.key"
	}
	return f.db + ".key"
}

// checkpointPath is the store's checkpoint file, where the latest
// checkpoint of each tenant's log is copied: named after the store, so
// that two stores never share one. The SQLite store's sits beside its
// database; a PostgreSQL store's beside the server key, named after the
// store's log name (known once the store is open: "" before), so that
// servers of two databases started from one folder keep one file each.
func (f *storeFlags) checkpointPath() string {
	if f.postgres == "" {
		return f.db + ".checkpoint"
	}
	if f.logName == "" {
		return ""
	}
	return f.keyPath() + "." + fileSafe(f.logName) + ".checkpoint"
}

// oldCheckpointPath is where the checkpoint file was before it was named
// after the store: beside the key, named after it, when the key was given
// or the store is PostgreSQL's; "" where that is the same file.
func (f *storeFlags) oldCheckpointPath() string {
	if f.postgres == "" && f.key == "" {
		return ""
	}
	return f.keyPath() + ".checkpoint"
}

// fileSafe spells a log name as part of a file name: "/" becomes "_",
// and every byte other than a letter, a digit, ".", "-" or "~" is
// written %XX, so that two log names never share a file.
func fileSafe(name string) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c == '/':
			b.WriteByte('_')
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '-', c == '~':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// verifyStatusPath is where verify records its last outcome, beside the
// checkpoint file.
func (f *storeFlags) verifyStatusPath() string {
	return strings.TrimSuffix(f.checkpointPath(), ".checkpoint") + ".verified"
}

// flagArg is the store flag to repeat in a hint (never the DSN itself,
// which may hold a password).
func (f *storeFlags) flagArg() string {
	if f.postgres != "" {
		return `--postgres "$CUSTODY_POSTGRES"`
	}
	return "--db " + f.db
}

// where names the store for messages.
func (f *storeFlags) where() string {
	if f.postgres != "" {
		return "PostgreSQL"
	}
	return f.db
}

// open opens the store and the service over it.
func (f *storeFlags) open(ctx context.Context, stderr io.Writer) (*custody.Service, custody.Store, error) {
	var opts custody.Options
	if f.policy != "" {
		text, err := os.ReadFile(f.policy)
		if err != nil {
			return nil, nil, fmt.Errorf("reading policy: %w", err)
		}
		if opts.Policy, err = custody.ParsePolicy(text); err != nil {
			return nil, nil, fmt.Errorf("policy %s: %w", f.policy, err)
		}
	}
	if f.sensitive != "" {
		opts.SensitiveKeys = strings.Split(f.sensitive, ",")
	}
	if f.strongEdge < 0 || f.strongEdge > 1 {
		return nil, nil, usageError{fmt.Sprintf("--strong-edge %v must be in [0,1] (0 means the default)", f.strongEdge)}
	}
	opts.ReviewTTL, opts.StrongEdge, opts.ReadRetention = f.reviewTTL, f.strongEdge, f.readRetention
	key, created, err := tlog.LoadOrCreateServerKey(f.keyPath())
	if err != nil {
		return nil, nil, err
	}
	if created && stderr != nil {
		fmt.Fprintf(stderr, "custody: created server key %s (keep it: it seals every principal's signing key)\n", f.keyPath())
	}
	var st custody.Store
	if f.postgres != "" {
		var pg *postgres.Store
		if pg, err = postgres.Open(ctx, f.postgres); err == nil {
			if f.searchMemory != 0 {
				pg.SetSearchMemory(max(f.searchMemory, 0))
			}
			st = pg
		}
	} else {
		st, err = sqlite.OpenWith(ctx, f.db, sqlite.Options{SearchMemory: f.searchMemory})
	}
	if err != nil {
		return nil, nil, err
	}
	name, err := custody.ResolveLogName(ctx, st, f.origin)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	if name.Recorded && stderr != nil && !f.namedInBanner {
		fmt.Fprintf(stderr, "custody: the store's log name is %s (tenant T's log has the origin %s/T)\n", name.Name, name.Name)
	}
	opts.LogOrigin, f.logName = name.Name, name.Name
	if err := f.moveCheckpointFile(stderr); err != nil {
		st.Close()
		return nil, nil, err
	}
	opts.CheckpointFile = f.checkpointPath()
	opts.VerifyStatusFile = f.verifyStatusPath()
	opts.RegistryFile = f.keyPath() + ".registry"
	opts.Embedder = f.embedder
	svc, err := custody.New(st, key, opts)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return svc, st, nil
}

// storeOrServer reports whether fs, parsed, names the store itself
// (--db or --postgres) rather than a running server (--url), and refuses
// both at once.
func storeOrServer(fs *flag.FlagSet) (offline bool, err error) {
	urlSet := false
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "db", "postgres":
			offline = true
		case "url":
			urlSet = true
		}
	})
	if offline && urlSet {
		return false, usageError{"give --url (a running server) or --db/--postgres (the store itself), not both"}
	}
	return offline, nil
}

// prepareSearch starts building the store's copy of its search index in
// memory (the embedded store's; with PostgreSQL, every tenant's), for a
// command that serves searches for a while (serve, mcp): the first
// searches need not be ranked by FTS5 or ts_rank_cd while it is built.
func prepareSearch(st custody.Store) {
	if p, ok := st.(interface{ PrepareSearch() }); ok {
		p.PrepareSearch()
	}
}
