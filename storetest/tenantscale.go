package storetest

import (
	"fmt"
	"testing"

	custody "github.com/custody-mem/custody"
)

// TenantScaleTenants and TenantScaleWriters shape BenchTenantScale: so
// many tenants, written to by so many goroutines spread over the servers.
const (
	TenantScaleTenants = 8
	TenantScaleWriters = 16
)

// BenchTenantScale measures admitted writes per second to
// TenantScaleTenants tenants from the servers open returns (stores of one
// database, each with its own service: in-process servers, each with its
// own connection pool), goroutine g writing to tenant g mod 8 through
// server g/8 mod servers, so that every tenant is written through every
// server. Each tenant's log is a tree of its own, so writers of different
// tenants need not wait on one another. It then checks that each tenant's
// log verifies. The acceptance figure is the ratio of two servers' rate to
// one server's (docs/benchmarks.md).
func BenchTenantScale(b *testing.B, open func(b *testing.B) []custody.Store) {
	stores := open(b)
	svcs := newServers(b, stores, NewClock(Start))
	callers := make([]*custody.Caller, TenantScaleTenants)
	for i := range callers {
		p, _, err := svcs[0].AddPrincipal(b.Context(), custody.PrincipalInput{Tenant: fmt.Sprintf("t%d", i), Name: "alice", Roles: []string{"user"}})
		if err != nil {
			b.Fatal(err)
		}
		callers[i] = &custody.Caller{Principal: p, Subject: p}
	}
	rngs := goroutineRNGs(TenantScaleWriters, 1)
	lat, elapsed := Hammer(b, TenantScaleWriters, func(g int) error {
		svc := svcs[(g/TenantScaleTenants)%len(svcs)]
		d, err := svc.Remember(b.Context(), callers[g%TenantScaleTenants], custody.Candidate{Namespace: "bench", Class: custody.ClassFact,
			Body: benchBody(rngs[g], 12), Channel: custody.ChannelUser})
		if err == nil && d.State != custody.StateAdmitted {
			b.Errorf("write %s: %s", d.ID, d.State)
		}
		return err
	})
	ReportCalls(b, lat, elapsed, "writes/s", "write")
	rep, err := svcs[len(svcs)-1].Verify(b.Context(), custody.VerifyOptions{})
	if err != nil {
		b.Fatalf("verify after the writes: %v", err)
	}
	if len(rep.Logs) != TenantScaleTenants {
		b.Fatalf("verify found %d tenants' logs, want %d", len(rep.Logs), TenantScaleTenants)
	}
	for _, l := range rep.Logs {
		if l.Problem != "" {
			b.Fatalf("%s's log: %s", l.Tenant, l.Problem)
		}
	}
}
