package storetest

import (
	"testing"

	custody "github.com/custody-mem/custody"
)

// Facter returns a function that has c remember body as an admitted fact
// in namespace n through svc and returns its id, failing tb otherwise:
// the writes of a migration test, before it rewinds the database.
func Facter(tb testing.TB, svc *custody.Service, c *custody.Caller) func(body string) string {
	return func(body string) string {
		tb.Helper()
		d, err := svc.Remember(tb.Context(), c, custody.Candidate{Namespace: "n", Class: custody.ClassFact, Body: body, Channel: custody.ChannelUser})
		if err != nil || d.State != custody.StateAdmitted {
			tb.Fatalf("remember %q = %+v, %v", body, d, err)
		}
		return d.ID
	}
}
