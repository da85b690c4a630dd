package httpapi

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/custody-mem/custody"
)

// policyFailStore is a store whose transactions fail to read the tenant
// policy while fail is set: the policy store read fails.
type policyFailStore struct {
	custody.Store
	fail *atomic.Bool
}

func (s policyFailStore) Update(ctx context.Context, fn func(custody.Tx) error) error {
	return s.Store.Update(ctx, func(tx custody.Tx) error { return fn(policyFailTx{tx, s.fail}) })
}

func (s policyFailStore) View(ctx context.Context, fn func(custody.Tx) error) error {
	return s.Store.View(ctx, func(tx custody.Tx) error { return fn(policyFailTx{tx, s.fail}) })
}

type policyFailTx struct {
	custody.Tx
	fail *atomic.Bool
}

func (tx policyFailTx) Policy(ctx context.Context, tenant string) ([]byte, error) {
	if tx.fail.Load() {
		return nil, errors.New("reading the policies table: disk I/O error")
	}
	return tx.Tx.Policy(ctx, tenant)
}

// wantPolicyUnavailable writes a user fact and checks it waits as pending
// with policy-unavailable and the error in its receipt, invisible to get.
func wantPolicyUnavailable(t *testing.T, e *env, alice, body string) string {
	t.Helper()
	r := e.do(alice, "POST", "/v1/memories", MemoryRequest{Namespace: "n", Class: "fact", Body: body, Channel: "user"})
	want(t, r, http.StatusAccepted, "")
	d := r.json(t)
	rc, _ := d["receipt"].(map[string]any)
	rules, _ := rc["rules"].([]any)
	if d["state"] != "pending" || !slices.Contains(rules, any("policy-unavailable")) || rc["error"] == "" || rc["error"] == nil {
		t.Fatalf("write while the policy cannot be loaded = %s, want pending with policy-unavailable and the error", r.body)
	}
	id := d["id"].(string)
	want(t, e.do(alice, "GET", "/v1/memories/"+id, nil), http.StatusNotFound, "not_found")
	return id
}

// TestPolicyThatCannotBeLoadedLeavesCandidatesPending pins design rule 3 for
// a policy that cannot be loaded (as opposed to one that errors when
// evaluated): a tenant policy row that no longer parses, and a failing read
// of the policy store. Each leaves the candidate pending with
// policy-unavailable in its receipt, never admitted; the twins: the same
// write is admitted while the policy loads, and a pending candidate is
// admitted once a loadable policy is installed.
func TestPolicyThatCannotBeLoadedLeavesCandidatesPending(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env, raw func(testing.TB, string), b backend) {
		alice := e.principal("acme", "alice", []string{"user"})
		olivia := e.principal("acme", "olivia", []string{"policy_owner"})
		want(t, e.do(olivia, "PUT", "/v1/policy", PolicyRequest{Text: string(custody.DefaultPolicyText())}), http.StatusOK, "")
		want(t, e.do(alice, "POST", "/v1/memories", MemoryRequest{Namespace: "n", Class: "fact", Body: "before the damage", Channel: "user"}),
			http.StatusCreated, "")

		// The stored policy text no longer parses (an edit or a bad migration).
		garbled := `UPDATE policies SET text = CAST('permit (principal, action' AS BLOB)`
		if b.name == "postgres" {
			garbled = `UPDATE policies SET text = convert_to('permit (principal, action', 'UTF8')`
		}
		raw(t, garbled)
		id := wantPolicyUnavailable(t, e, alice, "written under a garbled policy")

		r := e.do(olivia, "PUT", "/v1/policy", PolicyRequest{Text: string(custody.DefaultPolicyText())})
		want(t, r, http.StatusOK, "")
		if got, _ := r.json(t)["changed"].([]any); !slices.Contains(got, any(id)) {
			t.Errorf("installing a loadable policy changed %v, want %s", got, id)
		}
		want(t, e.do(alice, "GET", "/v1/memories/"+id, nil), http.StatusOK, "")
	})
}

// TestPolicyStoreReadFailureLeavesCandidatesPending is the same rule when
// reading the policy fails, on every backend.
func TestPolicyStoreReadFailureLeavesCandidatesPending(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			st, _ := b.open(t)
			fail := &atomic.Bool{}
			e := newEnvOn(t, policyFailStore{st, fail}, nil, custody.Options{})
			alice := e.principal("acme", "alice", []string{"user"})
			rita := e.principal("acme", "rita", []string{"reviewer"})
			want(t, e.do(alice, "POST", "/v1/memories", MemoryRequest{Namespace: "n", Class: "fact", Body: "while the policy loads", Channel: "user"}),
				http.StatusCreated, "")
			fail.Store(true)
			id := wantPolicyUnavailable(t, e, alice, "while the policy store fails")
			fail.Store(false)
			r := e.do(rita, "POST", "/v1/review/reevaluate", nil)
			want(t, r, http.StatusOK, "")
			if got, _ := r.json(t)["changed"].([]any); !slices.Contains(got, any(id)) {
				t.Errorf("re-evaluation changed %v, want %s", got, id)
			}
			want(t, e.do(alice, "GET", "/v1/memories/"+id, nil), http.StatusOK, "")
		})
	}
}
