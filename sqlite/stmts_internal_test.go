package sqlite

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
)

// The read side of TestFirstStatementNeedsNoSecondConnection: a read
// transaction meeting a new statement while every other read connection is
// taken finishes, and the statement is in the cache afterwards.
func TestReadTxFirstStatementWithOneConnection(t *testing.T) {
	ctx := t.Context()
	st, err := Open(ctx, filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	st.r.SetMaxOpenConns(3)
	var held []*sql.Conn
	for range 2 {
		c, err := st.r.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	const q = `SELECT COUNT(*) FROM records WHERE tenant = ?`
	done := make(chan error, 1)
	go func() {
		done <- st.View(ctx, func(tx custody.Tx) error {
			var n int
			return tx.(*txn).QueryRowContext(ctx, q, "acme").Scan(&n)
		})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a read transaction waited 5 s for a second connection to prepare a statement")
	}
	for _, c := range held {
		c.Close()
	}
	if st.rstmts.lookup(q) == nil {
		t.Error("the statement is not in the cache after the transaction")
	}
}
