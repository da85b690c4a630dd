package sqlite_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/sqlite"
	"github.com/custody-mem/custody/storetest"
	"github.com/custody-mem/custody/tlog"
)

// BenchmarkWALUnderLoad writes CUSTODY_BENCH_RECORDS admitted facts
// (20,000 by default) through the service from 16 writers while 4
// searchers run, sampling the WAL file's size after every write, and
// reports its peak (wal-peak-MB) and its size at the end: the issue's
// "WAL size after 100k writes with concurrent searches" with
// CUSTODY_BENCH_RECORDS=100000. Run it with -benchtime 1x.
func BenchmarkWALUnderLoad(b *testing.B) {
	n := storetest.BenchRecords(b, 20000)
	for range b.N {
		st, _, svc, alice := serviceBench(b)
		wal := st.Path() + "-wal"
		var peak atomic.Int64
		size := func() int64 {
			fi, err := os.Stat(wal)
			if errors.Is(err, fs.ErrNotExist) {
				return 0
			}
			if err != nil {
				b.Fatal(err)
			}
			return fi.Size()
		}
		var next atomic.Int64
		var writers, searchers sync.WaitGroup
		stop := make(chan struct{})
		for s := range 4 {
			searchers.Add(1)
			go func() {
				defer searchers.Done()
				for i := s; ; i += 4 {
					select {
					case <-stop:
						return
					default:
					}
					if _, err := svc.Search(b.Context(), alice, custody.SearchInput{Query: storetest.Varied.Query(i)}); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		for range 16 {
			writers.Add(1)
			go func() {
				defer writers.Done()
				for {
					i := next.Add(1)
					if i > int64(n) {
						return
					}
					c := custody.Candidate{Namespace: "wal", Key: fmt.Sprintf("k%d", i), Class: custody.ClassFact, Channel: "user",
						Body: fmt.Sprintf("fact %d about %s", i, storetest.Varied.Query(int(i)))}
					if _, err := svc.Remember(b.Context(), alice, c); err != nil {
						b.Error(err)
						return
					}
					for s := size(); ; {
						p := peak.Load()
						if s <= p || peak.CompareAndSwap(p, s) {
							break
						}
					}
				}
			}()
		}
		writers.Wait()
		close(stop)
		searchers.Wait()
		b.ReportMetric(float64(peak.Load())/(1<<20), "wal-peak-MB")
		b.ReportMetric(float64(size())/(1<<20), "wal-end-MB")
	}
}

// serviceBench is a service over a new store of the benchmark, and alice,
// a user acting for herself.
func serviceBench(b *testing.B) (*sqlite.Store, *tlog.ServerKey, *custody.Service, *custody.Caller) {
	dir := b.TempDir()
	st, err := sqlite.Open(b.Context(), filepath.Join(dir, "c.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	key, _, err := tlog.LoadOrCreateServerKey(filepath.Join(dir, "server.key"))
	if err != nil {
		b.Fatal(err)
	}
	svc, err := custody.New(st, key, custody.Options{})
	if err != nil {
		b.Fatal(err)
	}
	p, _, err := svc.AddPrincipal(b.Context(), custody.PrincipalInput{Tenant: "acme", Name: "alice", Roles: []string{"user"}})
	if err != nil {
		b.Fatal(err)
	}
	c, err := svc.Act(b.Context(), p, "")
	if err != nil {
		b.Fatal(err)
	}
	return st, key, svc, c
}
