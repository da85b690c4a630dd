package httpapi

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestGateMetricLabelsBounded: a caller sending a thousand made-up action
// names does not make a thousand label values; they are counted as
// "other", beside the actions the policy names (and its patterns).
func TestGateMetricLabelsBounded(t *testing.T) {
	reg := prometheus.NewRegistry()
	e := newEnv(t, Options{Registry: reg, RatePerSecond: -1}) // no rate limit
	alice := e.principal("acme", "alice", []string{"user"})
	for i := range 1000 {
		want(t, e.do(alice, "POST", "/v1/gate", GateRequest{Action: fmt.Sprintf("made_up_%d", i)}), http.StatusOK, "")
	}
	want(t, e.do(alice, "POST", "/v1/gate", GateRequest{Action: "payments.made_up_wire"}), http.StatusOK, "")
	want(t, e.do(alice, "POST", "/v1/gate", GateRequest{Action: "get_balance"}), http.StatusOK, "")

	m := e.do("", "GET", "/metrics", nil)
	want(t, m, http.StatusOK, "")
	text := m.String()
	for _, s := range []string{
		`custody_gate_decisions_total{action="other",decision="confirm"} 1000`,
		`custody_gate_decisions_total{action="payments.*",decision="confirm"} 1`,
		`custody_gate_decisions_total{action="get_balance",decision="allow"} 1`,
	} {
		if !strings.Contains(text, s) {
			t.Errorf("metrics lack %s", s)
		}
	}
	if n := strings.Count(text, "custody_gate_decisions_total{"); n != 3 {
		t.Errorf("%d gate decision series, want 3:\n%s", n, text)
	}
	if strings.Contains(text, "made_up") {
		t.Error("a caller's action name became a label")
	}
}
