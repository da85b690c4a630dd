package storetest

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
)

// BenchGate measures a gate call for a payment, through the service, on a
// store of CUSTODY_BENCH_RECORDS records (default DefaultBenchRecords,
// written as BenchSearch's): its recipient is the subject's payee account,
// justified by her memory of it, and its amount the one she asked for in
// the session, which has also read 50 e-mails. It reports p50 and p99.
func BenchGate(b *testing.B, open func(b *testing.B) custody.Store) {
	n := BenchRecords(b, DefaultBenchRecords)
	svc, alice := benchService(b, open(b), n)
	ctx := b.Context()
	hp, _, err := svc.AddPrincipal(ctx, custody.PrincipalInput{Tenant: "acme", Name: "harness", Roles: []string{"agent"}, Channels: []string{"agent", "tool:email"}})
	if err != nil {
		b.Fatal(err)
	}
	harness, err := svc.Act(ctx, hp, "alice")
	if err != nil {
		b.Fatal(err)
	}
	payee, err := svc.Remember(ctx, alice, custody.Candidate{Namespace: "bank", Key: "payee_account", Class: custody.ClassFact, Body: "ACCT-1042", Channel: custody.ChannelUser})
	if err != nil {
		b.Fatal(err)
	}
	s, err := svc.OpenSession(ctx, harness)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 10))
	for range 50 {
		if _, err := svc.Observe(ctx, harness, s.ID, custody.ObservationInput{Channel: "tool:email", Text: benchBody(rng, 40)}); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := svc.Observe(ctx, alice, s.ID, custody.ObservationInput{Channel: custody.ChannelUser, Text: "Pay the 10 EUR fee to my payee."}); err != nil {
		b.Fatal(err)
	}
	in := custody.GateInput{Action: "send_money", Args: map[string]any{"recipient": "ACCT-1042", "amount": 10}, Justification: []string{payee.ID}, Session: s.ID}
	var ds []time.Duration
	for b.Loop() {
		t0 := time.Now()
		d, err := svc.Gate(ctx, harness, in)
		if err != nil || d.Decision != custody.GateAllow {
			b.Fatal(err, d)
		}
		ds = append(ds, time.Since(t0))
	}
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(n), "records")
}
