package custody_test

import (
	"cmp"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// BenchmarkDiskPerRecord reports the bytes per record of the seeded store
// (CUSTODY_BENCH_RECORDS records written by 16 concurrent writers, as
// seeded writes them): the file and its WAL as the server leaves them,
// and, from dbstat over a compacted copy (VACUUM INTO, so that a store
// seeded now and one copied from CUSTODY_BENCH_SEEDS measure alike), each
// table and index, and the average stored length of each column of
// records and log_leaves. The breakdown is printed to stderr; run:
//
//	CUSTODY_BENCH_SEEDS=DIR CUSTODY_BENCH_RECORDS=100000 go test -run '^$' -bench 'DiskPerRecord$' -benchtime 1x .
func BenchmarkDiskPerRecord(b *testing.B) {
	n := benchRecords(b)
	e, _ := seeded(b, n)
	ctx := e.ctx
	path := e.store.Path()
	size := func(p string) int64 {
		fi, err := os.Stat(p)
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	file, wal := size(path), size(path+"-wal")
	compact := filepath.Join(b.TempDir(), "compact.db")
	for b.Loop() {
		os.Remove(compact)
		if _, err := e.store.DB().ExecContext(ctx, `VACUUM INTO ?`, compact); err != nil {
			b.Fatal(err)
		}
	}
	db, err := sql.Open("sqlite", compact)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	type row struct {
		name  string
		bytes int64
	}
	var rows []row
	rs, err := db.QueryContext(ctx, `SELECT name, SUM(pgsize) FROM dbstat GROUP BY name`)
	if err != nil {
		b.Fatal(err)
	}
	var total int64
	for rs.Next() {
		var r row
		if err := rs.Scan(&r.name, &r.bytes); err != nil {
			b.Fatal(err)
		}
		rows = append(rows, r)
		total += r.bytes
	}
	if err := rs.Err(); err != nil {
		b.Fatal(err)
	}
	slices.SortFunc(rows, func(x, y row) int { return cmp.Compare(y.bytes, x.bytes) })
	per := func(v int64) float64 { return float64(v) / float64(n) }
	var out strings.Builder
	fmt.Fprintf(&out, "disk per record, %d records: file %.0f B, WAL %.0f B; compacted %.0f B:\n", n, per(file), per(wal), per(total))
	for _, r := range rows {
		if per(r.bytes) >= 1 {
			fmt.Fprintf(&out, "  %-34s %7.1f B\n", r.name, per(r.bytes))
		}
	}
	for _, t := range []string{"records", "log_leaves"} {
		cols, err := db.QueryContext(ctx, `SELECT name FROM pragma_table_info(?)`, t)
		if err != nil {
			b.Fatal(err)
		}
		var names []string
		for cols.Next() {
			var c string
			if err := cols.Scan(&c); err != nil {
				b.Fatal(err)
			}
			names = append(names, c)
		}
		cols.Close()
		fmt.Fprintf(&out, "  average stored length in %s:", t)
		for _, c := range names {
			var avg sql.NullFloat64
			if err := db.QueryRowContext(ctx, fmt.Sprintf(`SELECT AVG(LENGTH(CAST(%q AS BLOB))) FROM %q`, c, t)).Scan(&avg); err != nil {
				b.Fatal(err)
			}
			fmt.Fprintf(&out, " %s %.1f", c, avg.Float64)
		}
		out.WriteString("\n")
	}
	fmt.Fprint(os.Stderr, out.String())
	b.ReportMetric(per(file+wal), "B/record")
	b.ReportMetric(per(total), "compacted-B/record")
	b.ReportMetric(per(wal), "WAL-B/record")
}
