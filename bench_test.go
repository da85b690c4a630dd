package custody_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/sqlite"
)

func BenchmarkRemember(b *testing.B) {
	e, alice := seeded(b, benchRecords(b))
	timed(b, func(i int) error {
		if _, err := e.svc.Remember(e.ctx, alice, custody.Candidate{Namespace: "bench", Class: "episode", Body: body(i), Channel: "user"}); err != nil {
			b.Fatal(err)
		}
		return nil
	})
}

// BenchmarkRememberKeyed writes a new version of an existing key (a user
// updating a fact): the key's current and newest versions are read, and the
// previous version stops being the one in force.
func BenchmarkRememberKeyed(b *testing.B) {
	n := benchRecords(b)
	e, alice := seeded(b, n)
	timed(b, func(i int) error {
		d, err := e.svc.Remember(e.ctx, alice, custody.Candidate{Namespace: "bench", Key: "k" + strconv.Itoa(i*7919%n), Class: "fact", Body: body(i), Channel: "user"})
		if err == nil && d.State != custody.StateAdmitted {
			b.Fatalf("overwrite of k%d: %s", i*7919%n, d.State)
		}
		return err
	})
}

func BenchmarkGet(b *testing.B) {
	e, alice := seeded(b, benchRecords(b))
	p, err := e.svc.List(e.ctx, alice, custody.ListInput{Limit: 500})
	if err != nil {
		b.Fatal(err)
	}
	timed(b, func(i int) error {
		if _, err := e.svc.Get(e.ctx, alice, p.Items[i%len(p.Items)].ID); err != nil {
			b.Fatal(err)
		}
		return nil
	})
}

// BenchmarkRecallKey lists a key's value in force (namespace and key
// given), for keys spread over the whole store: the oldest are as far from
// the newest records as the store is large.
func BenchmarkRecallKey(b *testing.B) {
	n := benchRecords(b)
	e, alice := seeded(b, n)
	timed(b, func(i int) error {
		k := "k" + strconv.Itoa(i*7919%n)
		p, err := e.svc.List(e.ctx, alice, custody.ListInput{Namespace: "bench", Key: k})
		if err != nil || len(p.Items) != 1 || p.Items[0].Key != k {
			b.Fatal(err, p)
		}
		return nil
	})
}

// BenchmarkListSparse lists the newest records of a subject who owns 20
// records in a tenant whose other user owns the seeded ones.
func BenchmarkListSparse(b *testing.B) {
	e, alice := seeded(b, benchRecords(b))
	if _, _, err := e.svc.AddPrincipal(e.ctx, custody.PrincipalInput{Tenant: "acme", Name: "carol", Roles: []string{"user"}}); err != nil && !errors.Is(err, custody.ErrConflict) {
		b.Fatal(err)
	}
	carol := e.act(mustPrincipal(b, e, "acme", "carol"), "")
	page, err := e.svc.List(e.ctx, carol, custody.ListInput{})
	if err != nil {
		b.Fatal(err)
	}
	for i := len(page.Items); i < 20; i++ {
		// Older than most of alice's records: interleave them by writing
		// alice's next records after.
		e.remember(carol, custody.Candidate{Namespace: "c", Class: "fact", Body: body(i), Channel: "user"})
		e.remember(alice, custody.Candidate{Namespace: "bench", Class: "fact", Body: body(i), Channel: "user"})
	}
	timed(b, func(i int) error {
		p, err := e.svc.List(e.ctx, carol, custody.ListInput{Limit: 50})
		if err != nil || len(p.Items) != 20 {
			b.Fatal(err, len(p.Items))
		}
		return nil
	})
}

func BenchmarkSearch(b *testing.B) {
	e, alice := seeded(b, benchRecords(b))
	_, bytes, _, _ := e.store.SearchIndexStats()
	b.ReportMetric(float64(bytes)/1e6, "index-MB") // the copy in memory
	timed(b, func(i int) error {
		hits, err := e.svc.Search(e.ctx, alice, custody.SearchInput{Query: term(i*7919) + " " + term((i+1)*7919+104729)})
		if err != nil || len(hits) == 0 {
			b.Fatal(err, len(hits))
		}
		return nil
	})
}

// BenchmarkSearchAfterWrite times a search that follows a write, as an
// agent searching right after it remembers something: the write's record
// waits for the search indexes, and the search moves it in first.
func BenchmarkSearchAfterWrite(b *testing.B) {
	e, alice := seeded(b, benchRecords(b))
	ds := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		e.remember(alice, custody.Candidate{Namespace: "bench", Class: "episode", Body: body(i), Channel: "user"})
		b.StartTimer()
		t0 := time.Now()
		hits, err := e.svc.Search(e.ctx, alice, custody.SearchInput{Query: term(i*7919) + " " + term((i+1)*7919+104729)})
		if err != nil || len(hits) == 0 {
			b.Fatal(err, len(hits))
		}
		ds = append(ds, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds()), "p99-µs")
}

func BenchmarkGate(b *testing.B) {
	e, alice := seeded(b, benchRecords(b))
	if _, _, err := e.svc.AddPrincipal(e.ctx, custody.PrincipalInput{Tenant: "acme", Name: "harness", Roles: []string{"agent"}, Channels: []string{"agent", "tool:email"}}); err != nil && !errors.Is(err, custody.ErrConflict) {
		b.Fatal(err)
	}
	h := e.act(mustPrincipal(b, e, "acme", "harness"), "alice")
	page, err := e.svc.List(e.ctx, alice, custody.ListInput{Namespace: "bank", Key: "payee_account"})
	if err != nil {
		b.Fatal(err)
	}
	if len(page.Items) == 0 {
		e.remember(alice, custody.Candidate{Namespace: "bank", Key: "payee_account", Class: "fact", Body: "ACCT-1042", Channel: "user"})
		page, _ = e.svc.List(e.ctx, alice, custody.ListInput{Namespace: "bank", Key: "payee_account"})
	}
	pay := page.Items[0]
	s, _ := e.svc.OpenSession(e.ctx, h)
	for i := range 50 {
		e.svc.Observe(e.ctx, h, s.ID, custody.ObservationInput{Channel: "tool:email", Text: body(i)})
	}
	// Her request backs the amount (positive provenance).
	if _, err := e.svc.Observe(e.ctx, alice, s.ID, custody.ObservationInput{Channel: "user", Text: "Pay the 10 EUR fee to my payee."}); err != nil {
		b.Fatal(err)
	}
	timed(b, func(i int) error {
		d, err := e.svc.Gate(e.ctx, h, custody.GateInput{Action: "send_money", Args: map[string]any{"recipient": "ACCT-1042", "amount": 10}, Justification: []string{pay.ID}, Session: s.ID})
		if err != nil || d.Decision != custody.GateAllow {
			b.Fatal(err, d)
		}
		return nil
	})
}

// BenchmarkCascade quarantines the root of a DAG with n derived
// descendants; one op is one quarantine. The DAG is built once by 16
// writers (and kept under CUSTODY_BENCH_SEEDS when set); each run starts
// from a copy of its files, settled, so -benchtime 5x measures five
// cascades for the price of one build.
func BenchmarkCascade(b *testing.B) {
	b.StopTimer()
	seed, root := cascadeSeed(b, benchRecords(b))
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := benchDir(b)
		if err := copyFiles(seed, dir, func(string) bool { return true }); err != nil {
			b.Fatal(err)
		}
		e := newEnvAt(keepTB{b}, dir, custody.Options{})
		rev := e.act(mustPrincipal(b, e, "acme", "rev"), "")
		settle(b, e)
		b.StartTimer()
		ids, err := e.svc.Quarantine(e.ctx, rev, root, "")
		b.StopTimer()
		if err != nil || len(ids) != benchRecords(b)+1 {
			b.Fatal(err, len(ids))
		}
		e.store.Close()
		os.RemoveAll(dir)
	}
}

// cascadeSeeds holds the built DAG of each size for this process.
var cascadeSeeds = map[int][2]string{}

// cascadeSeed returns the directory of a store whose root record has n
// derived children, and the root's id.
func cascadeSeed(b *testing.B, n int) (dir, root string) {
	if s, ok := cascadeSeeds[n]; ok {
		return s[0], s[1]
	}
	cache := os.Getenv("CUSTODY_BENCH_SEEDS")
	if cache == "" {
		cache = benchDir(b)
	}
	dir = filepath.Join(cache, "cascade-"+strconv.Itoa(n))
	if id, err := os.ReadFile(filepath.Join(dir, "root")); err == nil {
		cascadeSeeds[n] = [2]string{dir, string(id)}
		return dir, string(id)
	}
	tmp := dir + ".tmp"
	os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		b.Fatal(err)
	}
	e := newEnvAt(keepTB{b}, tmp, custody.Options{})
	alice := e.act(e.principal("acme", "alice", []string{"user"}, nil, nil), "")
	e.principal("acme", "rev", []string{"reviewer"}, nil, nil)
	r, err := e.svc.Remember(e.ctx, alice, custody.Candidate{Namespace: "c", Class: "episode", Body: "root", Channel: "user"})
	if err != nil {
		b.Fatal(err)
	}
	rememberAll(b, e, alice, n, func(j int) custody.Candidate {
		return custody.Candidate{Namespace: "c", Class: "episode", Body: body(j), Channel: "user",
			DerivedFrom: []custody.Edge{{ID: r.ID, Weight: 1}}}
	})
	settle(b, e)
	if err := e.store.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "root"), []byte(r.ID), 0o600); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		b.Fatal(err)
	}
	cascadeSeeds[n] = [2]string{dir, r.ID}
	return dir, r.ID
}

// BenchmarkLineageDepth50 reads the lineage of the tip of a 50-deep chain.
func BenchmarkLineageDepth50(b *testing.B) {
	e := benchEnv(b, "")
	alice := e.act(e.principal("acme", "alice", []string{"user"}, nil, nil), "")
	prev := e.remember(alice, custody.Candidate{Namespace: "l", Class: "episode", Body: "root", Channel: "user"})
	for i := range 50 {
		prev = e.remember(alice, custody.Candidate{Namespace: "l", Class: "episode", Body: body(i), Channel: "user",
			DerivedFrom: []custody.Edge{{ID: prev.ID, Weight: 1}}})
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		lin, err := e.svc.Lineage(e.ctx, alice, prev.ID)
		if err != nil || len(lin.Ancestors) != 50 {
			b.Fatal(err)
		}
	}
}

// BenchmarkExportRestore exports the seeded tenant and restores it into an
// empty store; one op is one export plus one restore.
func BenchmarkExportRestore(b *testing.B) {
	e, _ := seeded(b, benchRecords(b))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var buf bytes.Buffer
		if _, err := e.svc.Export(e.ctx, "acme", &buf); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		st, err := sqlite.Open(e.ctx, filepath.Join(b.TempDir(), "r.db"))
		if err != nil {
			b.Fatal(err)
		}
		fresh, err := custody.New(st, e.svc.ServerKey(), custody.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		rep, err := fresh.Restore(e.ctx, buf.Bytes(), nil)
		if err != nil || rep.Restored < benchRecords(b) {
			b.Fatal(err, rep)
		}
		b.StopTimer()
		st.Close()
		b.StartTimer()
	}
}

// BenchmarkVerify runs a full verify of the seeded store.
func BenchmarkVerify(b *testing.B) {
	e, _ := seeded(b, benchRecords(b))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := e.svc.Verify(e.ctx, custody.VerifyOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInclusionProof proves a random leaf of the seeded store's log
// (about CUSTODY_BENCH_RECORDS entries) against the whole tree.
func BenchmarkInclusionProof(b *testing.B) {
	e, _ := seeded(b, benchRecords(b))
	size, err := e.store.LogSize(e.ctx, "acme")
	if err != nil {
		b.Fatal(err)
	}
	timed(b, func(i int) error {
		if _, err := e.svc.InclusionProof(e.ctx, "acme", uint64(i*7919)%size, size); err != nil {
			b.Fatal(err)
		}
		return nil
	})
}

// BenchmarkConsistencyProof proves that a random earlier tree is a prefix
// of the whole one.
func BenchmarkConsistencyProof(b *testing.B) {
	e, _ := seeded(b, benchRecords(b))
	size, err := e.store.LogSize(e.ctx, "acme")
	if err != nil {
		b.Fatal(err)
	}
	timed(b, func(i int) error {
		if _, err := e.svc.ConsistencyProof(e.ctx, "acme", 1+uint64(i*7919)%(size-1), size); err != nil {
			b.Fatal(err)
		}
		return nil
	})
}
