package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/postgres"
	"github.com/custody-mem/custody/storetest"
	"github.com/custody-mem/custody/tlog"
	"github.com/jackc/pgx/v5"
)

// The tests need a PostgreSQL server where they may create databases: its
// DSN in CUSTODY_TEST_POSTGRES. `source .ci/postgres.sh` starts a throwaway
// cluster and sets it (and CUSTODY_TEST_PG_RESTART, for the restart test).
// Unset, the tests skip; set but unreachable, they fail.
const (
	envDSN     = "CUSTODY_TEST_POSTGRES"
	envRestart = "CUSTODY_TEST_PG_RESTART"
	envPgCtl   = "CUSTODY_TEST_PG_CTL" // an older name of envRestart
)

func adminDSN(tb testing.TB) string {
	tb.Helper()
	dsn := os.Getenv(envDSN)
	if dsn == "" {
		tb.Skipf("%s is not set: run `source .ci/postgres.sh` first (it starts a throwaway PostgreSQL and sets it), "+
			"or set it to the DSN of a server where the tests may create databases", envDSN)
	}
	return dsn
}

// withDatabase returns dsn with its database replaced by db.
func withDatabase(tb testing.TB, dsn, db string) string {
	tb.Helper()
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			tb.Fatalf("%s: %v", envDSN, err)
		}
		u.Path = "/" + db
		return u.String()
	}
	return dsn + " dbname=" + db // key=value form: the last value wins
}

// newDatabase creates an empty database for one test and drops it after.
func newDatabase(tb testing.TB) string {
	tb.Helper()
	admin := adminDSN(tb)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		tb.Fatalf("connecting to %s (from %s): %v", admin, envDSN, err)
	}
	defer conn.Close(context.Background())
	var b [6]byte
	rand.Read(b[:])
	name := "custody_test_" + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		tb.Fatalf("creating database %s: %v", name, err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			tb.Errorf("dropping database %s: %v", name, err)
			return
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			tb.Errorf("dropping database %s: %v", name, err)
		}
	})
	return withDatabase(tb, admin, name)
}

func openDSN(tb testing.TB, dsn string) *postgres.Store {
	tb.Helper()
	s, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

func open(tb testing.TB) custody.Store { return openDSN(tb, newDatabase(tb)) }

// userOf adds the user alice of tenant acme to svc and acts as her.
func userOf(t *testing.T, svc *custody.Service) *custody.Caller {
	t.Helper()
	p, _, err := svc.AddPrincipal(t.Context(), custody.PrincipalInput{Tenant: "acme", Name: "alice", Roles: []string{"user"}})
	if err != nil {
		t.Fatal(err)
	}
	return &custody.Caller{Principal: p, Subject: p}
}

func TestContract(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, adminDSN(t))
	if err != nil {
		t.Fatalf("%s is set but the server cannot be reached: %v", envDSN, err)
	}
	conn.Close(ctx)
	storetest.Run(t, func(t *testing.T) custody.Store { return open(t) })
}

func BenchmarkWrite(b *testing.B) {
	storetest.BenchWrite(b, func(b *testing.B) custody.Store { return open(b) })
}

func BenchmarkSearch(b *testing.B) {
	storetest.BenchSearch(b, func(b *testing.B) custody.Store { return open(b) })
}

func BenchmarkSearchHybrid(b *testing.B) {
	storetest.BenchSearchHybrid(b, func(b *testing.B) custody.Store { return open(b) })
}

// BenchmarkGate: CUSTODY_BENCH_RECORDS=100000 go test -run x -bench Gate -benchtime 200x ./postgres
func BenchmarkGate(b *testing.B) {
	storetest.BenchGate(b, func(b *testing.B) custody.Store { return open(b) })
}

// Servers started together on an empty database migrate it once; a
// database migrated by a newer custody is refused.
func TestMigrations(t *testing.T) {
	dsn := newDatabase(t)
	var wg sync.WaitGroup
	stores := make([]*postgres.Store, 4)
	errs := make([]error, len(stores))
	for i := range stores {
		wg.Go(func() { stores[i], errs[i] = postgres.Open(t.Context(), dsn) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		stores[i].Close()
	}
	s := openDSN(t, dsn)
	var n, maxV int
	if err := s.Pool().QueryRow(t.Context(), `SELECT COUNT(*), MAX(version) FROM schema_migrations`).Scan(&n, &maxV); err != nil {
		t.Fatal(err)
	}
	if n < 1 || n > maxV || maxV != postgres.SchemaVersion() {
		t.Errorf("schema_migrations has %d rows up to %d, want %d", n, maxV, postgres.SchemaVersion())
	}
	if _, err := s.Pool().Exec(t.Context(), `INSERT INTO schema_migrations (version, name) VALUES (999, 'from_the_future')`); err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.Open(t.Context(), dsn); err == nil || !strings.Contains(err.Error(), "upgrade custody") {
		t.Errorf("open a database of a newer schema: err = %v, want a request to upgrade", err)
	}
}

// An unreachable server is custody.ErrUnavailable (HTTP 503), a malformed
// DSN invalid input.
func TestUnavailable(t *testing.T) {
	_, err := postgres.Open(t.Context(), "postgres://custody@127.0.0.1:1/custody?sslmode=disable&connect_timeout=5")
	if !errors.Is(err, custody.ErrUnavailable) {
		t.Errorf("closed port: err = %v, want unavailable", err)
	}
	_, err = postgres.Open(t.Context(), "postgres://custody@127.0.0.1:bad/custody")
	if !errors.Is(err, custody.ErrInvalid) {
		t.Errorf("malformed DSN: err = %v, want invalid", err)
	}
}

// Connections the server drops are reported as unavailable, never as
// another error, and the store recovers by itself.
func TestConnectionLoss(t *testing.T) {
	dsn := newDatabase(t)
	st := openDSN(t, dsn)
	clock := storetest.NewClock(storetest.Start)
	svc := storetest.NewService(t, st, clock)
	ctx := t.Context()
	alice := userOf(t, svc)
	admin, err := pgx.Connect(ctx, adminDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	db := st.Pool().Config().ConnConfig.Database
	ok := 0
	for i := range 6 {
		if _, err := admin.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, db); err != nil {
			t.Fatal(err)
		}
		d, err := svc.Remember(ctx, alice, custody.Candidate{Namespace: "n", Class: custody.ClassFact, Body: fmt.Sprintf("write %d", i), Channel: "user"})
		switch {
		case err == nil:
			ok++
			if _, err := svc.Get(ctx, alice, d.ID); err != nil && !errors.Is(err, custody.ErrUnavailable) {
				t.Errorf("get after a dropped connection: %v", err)
			}
		case !errors.Is(err, custody.ErrUnavailable):
			t.Errorf("write %d after a dropped connection: err = %v, want unavailable", i, err)
		}
	}
	t.Logf("%d of 6 writes right after the server dropped the connections succeeded", ok)
	// The pool recovers: the next writes succeed.
	for i := range 3 {
		if _, err := svc.Remember(ctx, alice, custody.Candidate{Namespace: "n", Class: custody.ClassFact, Body: fmt.Sprintf("after %d", i), Channel: "user"}); err != nil {
			t.Fatalf("write after recovery: %v", err)
		}
	}
	if _, err := svc.Verify(ctx, custody.VerifyOptions{}); err != nil {
		t.Fatal(err)
	}
}

// twoServers is two services, each with its own store (connection pool),
// on one database and one server key: two custody servers sharing a
// PostgreSQL.
func twoServers(t *testing.T, dsn string) [2]*custody.Service {
	t.Helper()
	key, _, err := tlog.LoadOrCreateServerKey(filepath.Join(t.TempDir(), "server.key"))
	if err != nil {
		t.Fatal(err)
	}
	var svcs [2]*custody.Service
	var stores [2]*postgres.Store
	var errs [2]error
	var wg sync.WaitGroup
	for i := range stores {
		wg.Go(func() { stores[i], errs[i] = postgres.Open(t.Context(), dsn) })
	}
	wg.Wait()
	for i := range stores {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		t.Cleanup(func() { stores[i].Close() })
		if svcs[i], err = custody.New(stores[i], key, custody.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	return svcs
}

// checkLog checks that each tenant's log is numbered 0..n-1 without gaps
// or duplicates, and that the store verifies from every server. It
// returns the entries of all the logs.
func checkLog(t *testing.T, svcs ...*custody.Service) uint64 {
	t.Helper()
	st := svcs[0].Store()
	tenants, err := st.LogTenants(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var total uint64
	for _, tenant := range tenants {
		size, err := st.LogSize(t.Context(), tenant)
		if err != nil {
			t.Fatal(err)
		}
		leaves, err := st.Leaves(t.Context(), tenant, 0, size)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range leaves {
			if l.Index != uint64(i) {
				t.Fatalf("leaf %d of %s's log has index %d", i, tenant, l.Index)
			}
		}
		if uint64(len(leaves)) != size {
			t.Fatalf("%d leaves for a log of size %d", len(leaves), size)
		}
		total += size
	}
	size := total
	for i, svc := range svcs {
		if _, err := svc.Verify(t.Context(), custody.VerifyOptions{}); err != nil {
			t.Errorf("verify from server %d: %v", i, err)
		}
	}
	return size
}

// Two servers writing at once from several goroutines each: every
// acknowledged write is readable from both, versions of a shared key are
// unique, the log is contiguous, and both verify it.
func TestTwoServers(t *testing.T) {
	dsn := newDatabase(t)
	svcs := twoServers(t, dsn)
	ctx := t.Context()
	p, _, err := svcs[0].AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: "alice", Roles: []string{"user"}})
	if err != nil {
		t.Fatal(err)
	}
	alice := &custody.Caller{Principal: p, Subject: p}
	const goroutines, each = 4, 12
	var mu sync.Mutex
	var acked []string
	keyed := 0
	var wg sync.WaitGroup
	for s, svc := range svcs {
		for g := range goroutines {
			wg.Go(func() {
				for i := range each {
					in := custody.Candidate{Namespace: "two", Class: custody.ClassFact, Body: fmt.Sprintf("server %d goroutine %d write %d", s, g, i), Channel: "user"}
					if i%3 == 0 {
						in.Key = "shared"
					}
					d, err := svc.Remember(ctx, alice, in)
					if err != nil {
						t.Error(err)
						return
					}
					if d.State != custody.StateAdmitted {
						t.Errorf("write %s: %s", in.Body, d.State)
					}
					mu.Lock()
					if in.Key == "" {
						acked = append(acked, d.ID)
					} else {
						keyed++
					}
					mu.Unlock()
					if i%4 == 0 {
						if _, err := svc.Gate(ctx, alice, custody.GateInput{Action: "get_balance"}); err != nil {
							t.Error(err)
						}
					}
				}
			})
		}
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	for _, id := range acked {
		for i, svc := range svcs {
			if _, err := svc.Get(ctx, alice, id); err != nil {
				t.Errorf("server %d get %s: %v", i, id, err)
			}
		}
	}
	err = svcs[1].Store().View(ctx, func(tx custody.Tx) error {
		vs, err := tx.Versions(ctx, "acme", "alice", "two", "shared")
		if err != nil {
			return err
		}
		var got []int
		for _, v := range vs {
			got = append(got, v.Version)
		}
		want := make([]int, keyed)
		for i := range want {
			want[i] = i + 1
		}
		if !slices.Equal(got, want) {
			t.Errorf("versions of the shared key = %v, want 1..%d", got, keyed)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	size := checkLog(t, svcs[0], svcs[1])
	if min := uint64(1 + 2*goroutines*each); size < min {
		t.Errorf("log size %d, want at least %d", size, min)
	}
}

// Writes while the server restarts either succeed or fail as unavailable;
// every acknowledged write survives the restart, and the log verifies.
func TestRestartUnderLoad(t *testing.T) {
	restart := os.Getenv(envRestart)
	if restart == "" {
		restart = os.Getenv(envPgCtl)
	}
	if restart == "" {
		adminDSN(t)
		t.Skipf("%s is not set (`source .ci/postgres.sh` sets it to a command that restarts its cluster)", envRestart)
	}
	dsn := newDatabase(t)
	st := openDSN(t, dsn)
	svc := storetest.NewService(t, st, storetest.NewClock(storetest.Start))
	ctx := t.Context()
	alice := userOf(t, svc)

	var (
		mu           sync.Mutex
		acked        []string
		failed       atomic.Int64
		restarted    atomic.Bool
		afterRestart atomic.Int64
		stop         = make(chan struct{})
		deadline     = time.Now().Add(90 * time.Second)
		wg           sync.WaitGroup
	)
	for g := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if time.Now().After(deadline) {
					return
				}
				wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
				d, err := svc.Remember(wctx, alice, custody.Candidate{Namespace: "r", Class: custody.ClassFact,
					Body: fmt.Sprintf("goroutine %d write %d", g, i), Channel: "user"})
				cancel()
				switch {
				case err == nil:
					mu.Lock()
					acked = append(acked, d.ID)
					mu.Unlock()
					if restarted.Load() {
						afterRestart.Add(1)
					}
				case errors.Is(err, custody.ErrUnavailable):
					failed.Add(1)
					time.Sleep(20 * time.Millisecond) // back off as a client would
				default:
					t.Errorf("write during restart: err = %v, want success or unavailable", err)
					return
				}
			}
		})
	}
	// Let some writes land, restart, and go on until writes succeed again.
	for waited := 0; ; waited++ {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= 20 || waited > 500 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", restart)
	if out, err := cmd.CombinedOutput(); err != nil {
		close(stop)
		wg.Wait()
		t.Fatalf("restart (%s): %v\n%s", restart, err, out)
	}
	restarted.Store(true)
	for afterRestart.Load() < 40 && time.Now().Before(deadline) && !t.Failed() {
		time.Sleep(10 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if afterRestart.Load() < 40 {
		t.Fatalf("only %d writes succeeded after the restart", afterRestart.Load())
	}
	t.Logf("%d writes acknowledged, %d failed as unavailable during the restart", len(acked), failed.Load())
	for _, id := range acked {
		if _, err := svc.Get(ctx, alice, id); err != nil {
			t.Errorf("acknowledged write %s after the restart: %v", id, err)
		}
	}
	checkLog(t, svc)
}
