package sqlite_test

import (
	"database/sql"
	"fmt"
	"os"
	"testing"

	custody "github.com/custody-mem/custody"
)

// walFrame is the size of one WAL frame: its 24-byte header and a page.
const walFrame = 24 + 4096

// BenchmarkWALPagesPerWrite counts the pages a sequential write commits:
// after 3,000 writes, b.N more, one a commit, of new keys (keyed) or of no
// key (keyless), while a reader holds the WAL so that SQLite cannot
// restart it; each WAL frame is one page written, and two pwrite calls.
// It reports wal-pages/write. Every b.N of at most 1,000 stays under the
// size from which the writer resets the WAL. Run it with -benchtime 500x.
func BenchmarkWALPagesPerWrite(b *testing.B) {
	for _, keyed := range []bool{true, false} {
		b.Run(fmt.Sprintf("keyed=%t", keyed), func(b *testing.B) {
			if b.N > 1000 {
				b.Fatal("the WAL would pass the writer's reset size: run at most -benchtime 1000x")
			}
			st, _, svc, alice := serviceBench(b)
			write := func(i int) {
				c := custody.Candidate{Namespace: "wal", Class: custody.ClassFact, Channel: "user",
					Body: fmt.Sprintf("fact %d about invoices and payees", i)}
				if keyed {
					c.Key = fmt.Sprintf("k%d", i)
				}
				if d, err := svc.Remember(b.Context(), alice, c); err != nil || d.State != custody.StateAdmitted {
					b.Fatalf("write %d: %+v, %v", i, d, err)
				}
			}
			for i := range 3000 {
				write(i)
			}
			// A reader from the start keeps every frame after it in the file.
			raw, err := sql.Open("sqlite", st.Path())
			if err != nil {
				b.Fatal(err)
			}
			defer raw.Close()
			hold, err := raw.BeginTx(b.Context(), &sql.TxOptions{ReadOnly: true})
			if err != nil {
				b.Fatal(err)
			}
			defer hold.Rollback()
			var n int
			if err := hold.QueryRow(`SELECT COUNT(*) FROM records`).Scan(&n); err != nil || n < 3000 {
				b.Fatalf("the reader sees %d records, %v", n, err)
			}
			size := func() int64 {
				fi, err := os.Stat(st.Path() + "-wal")
				if err != nil {
					b.Fatal(err)
				}
				return fi.Size()
			}
			before := size()
			b.ResetTimer()
			for i := range b.N {
				write(3000 + i)
			}
			b.StopTimer()
			grown := size() - before
			if grown <= 0 {
				b.Fatalf("the WAL did not grow (%d bytes): it was reset under the reader", grown)
			}
			b.ReportMetric(float64(grown)/walFrame/float64(b.N), "wal-pages/write")
		})
	}
}
