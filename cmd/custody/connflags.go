package main

import (
	"flag"
	"time"

	"github.com/custody-mem/custody/httpapi"
)

// connFlags are serve's flags for slow and greedy clients.
type connFlags struct {
	readHeader, read, write, idle time.Duration
	perAddr                       int
	bodyBudgetMiB                 int64
}

func (f *connFlags) register(fs *flag.FlagSet) {
	fs.DurationVar(&f.readHeader, "read-header-timeout", httpapi.DefaultReadHeaderTimeout, "cut a client whose request headers take longer")
	fs.DurationVar(&f.read, "read-timeout", httpapi.DefaultReadTimeout, "cut a client whose whole request (body included) takes longer (408)")
	fs.DurationVar(&f.write, "write-timeout", httpapi.DefaultWriteTimeout, "cut an answer that takes longer to write (MCP event streams are exempt)")
	fs.DurationVar(&f.idle, "idle-timeout", httpapi.DefaultIdleTimeout, "close a keep-alive connection idle this long")
	fs.IntVar(&f.perAddr, "max-conns-per-addr", httpapi.DefaultMaxConnsPerAddr, "refuse connections beyond `n` open at once from one client address (-1: no cap)")
	fs.Int64Var(&f.bodyBudgetMiB, "body-budget", httpapi.DefaultBodyBudget>>20, "the `MiB` of request bodies all requests may hold at once while they are read and decoded; past it, 503 server_busy with Retry-After (raised to the largest body one request may send)")
}

// options fills o's connection settings from the flags.
func (f *connFlags) options(o httpapi.Options) httpapi.Options {
	o.ReadHeaderTimeout, o.ReadTimeout, o.WriteTimeout, o.IdleTimeout = f.readHeader, f.read, f.write, f.idle
	o.MaxConnsPerAddr = f.perAddr
	o.BodyBudget = f.bodyBudgetMiB << 20
	return o
}
