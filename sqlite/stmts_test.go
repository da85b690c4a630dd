package sqlite_test

import (
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
)

// A transaction that meets a statement for the first time must not wait
// for a second connection of its pool to prepare it while holding its own:
// with the other connections busy (here: taken, as an offline tool on the
// writer's pool or a burst of readers on the read pool would), that waits
// forever, or until the other side's busy timeout.
func TestFirstStatementNeedsNoSecondConnection(t *testing.T) {
	st, _, svc, alice := serviceAt(t, t.TempDir())
	ctx := t.Context()
	held, err := st.DB().Conn(ctx) // the writer pool's spare connection
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	done := make(chan error, 1)
	go func() {
		// A keyed preference: statements the workload so far has not run.
		_, err := svc.Remember(ctx, alice, custody.Candidate{Namespace: "prefs", Key: "colour", Class: custody.ClassPreference, Body: "blue", Channel: "user"})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a write waited 5 s for a second connection to prepare its statements")
	}
}
