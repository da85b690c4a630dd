package sqlite_test

import (
	"crypto/ed25519"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/custody-mem/custody/storetest"
	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/rfc6962"
)

// BenchmarkFloorWrite is the floor a write of the embedded store stands
// on: one transaction per write holding only the essential work (a record
// row, its FTS5 row, an Ed25519-signed log leaf and the tree nodes it
// completes, laid out as the store lays them out), on the same SQLite
// build and settings, among CUSTODY_BENCH_RECORDS rows (10,000 by
// default). No admission, no list or key indexes, no gate trigrams. Run it
// back to back with the root package's BenchmarkRemember to see what
// custody adds to it. (The store indexes records for search in batches,
// not per write, so it can go below this floor.)
func BenchmarkFloorWrite(b *testing.B) { floorWrite(b, 1) }

// BenchmarkFloorWriteBatch16 is BenchmarkFloorWrite with 16 writes to a
// transaction, the floor of group commit at 16 writers: ns/op is a whole
// transaction, µs/write a sixteenth of it (compare it with the root
// package's BenchmarkRememberConcurrent).
func BenchmarkFloorWriteBatch16(b *testing.B) { floorWrite(b, 16) }

// floorWrite runs b.N transactions of perTx floor writes each.
func floorWrite(b *testing.B, perTx int) {
	ctx := b.Context()
	path := filepath.Join(b.TempDir(), "floor.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=mmap_size(1073741824)&_txlock=immediate")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, q := range []string{
		`CREATE TABLE records (rid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, tenant TEXT NOT NULL, owner TEXT NOT NULL, body TEXT NOT NULL, state TEXT NOT NULL, created_at INTEGER NOT NULL)`,
		`CREATE VIRTUAL TABLE records_fts USING fts5(body, content='', contentless_delete=1)`,
		`CREATE TABLE log_leaves (idx INTEGER PRIMARY KEY, data BLOB NOT NULL, nodes BLOB NOT NULL)`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	_, key, _ := ed25519.GenerateKey(nil)
	rng := rand.New(rand.NewPCG(1, 2))
	words := storetest.Varied
	rf := &compact.RangeFactory{Hash: rfc6962.DefaultHasher.HashChildren}
	tree := rf.NewEmptyRange(0)
	write := func(tx *sql.Tx, i int) error {
		id := fmt.Sprintf("01JFLOOR%018d", i)
		body := words.Query(rng.IntN(1e6)) + " " + words.Query(rng.IntN(1e6)) + " " + words.Query(rng.IntN(1e6))
		res, err := tx.ExecContext(ctx, `INSERT INTO records (id, tenant, owner, body, state, created_at) VALUES (?,?,?,?,?,?)`,
			id, "acme", "alice", body, "admitted", time.Now().UnixNano())
		if err != nil {
			return err
		}
		rid, _ := res.LastInsertId()
		if _, err := tx.ExecContext(ctx, `INSERT INTO records_fts (rowid, body) VALUES (?,?)`, rid, body); err != nil {
			return err
		}
		entry := []byte(`{"record":"` + id + `","tenant":"acme","state":"admitted","body_sha256":"` + body + `"}`)
		leaf := append(ed25519.Sign(key, entry), entry...)
		// The nodes the append completes go in the leaf's row, as the
		// store keeps them (log_nodes.go).
		idx := tree.End()
		var nodes []byte
		if err := tree.Append(rfc6962.DefaultHasher.HashLeaf(leaf), func(_ compact.NodeID, h []byte) { nodes = append(nodes, h...) }); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO log_leaves (idx, data, nodes) VALUES (?,?,?)`, idx, leaf, nodes)
		return err
	}
	n := storetest.BenchRecords(b, 10000)
	for done := 0; done < n; done += 1000 {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		for i := done; i < min(done+1000, n); i++ {
			if err := write(tx, i); err != nil {
				b.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	i := n
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		t0 := time.Now()
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		for range perTx {
			if err := write(tx, i); err != nil {
				b.Fatal(err)
			}
			i++
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	elapsed := time.Since(start)
	if perTx == 1 {
		storetest.ReportCalls(b, lat, elapsed, "writes/s", "write")
		return
	}
	storetest.ReportCalls(b, lat, elapsed, "txs/s", "tx")
	b.ReportMetric(float64(elapsed.Microseconds())/float64(len(lat)*perTx), "µs/write")
}
