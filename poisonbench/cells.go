package poisonbench

import (
	"fmt"
	"time"

	custody "github.com/custody-mem/custody"
)

// A Cell is one defence configuration of the real service.
type Cell struct {
	Name string `json:"name"`
	// Summary says what the cell turns on, for the report.
	Summary string `json:"summary"`
	// Permissive replaces the admission policy with one rule that admits
	// everything, so the cell has no admission step at all.
	Permissive bool `json:"permissive"`
	// Lineage keeps non-amplification and the session floor on; without it
	// the service runs with Options.DisableLineage.
	Lineage bool `json:"lineage"`
	// Gate makes the agent ask the action gate before every tool call and
	// refuse unless it allows.
	Gate bool `json:"gate"`
	// Collapse makes the harness write everything on the user channel, as a
	// memory layer that records no provenance would.
	Collapse bool `json:"collapse"`
	// Restate makes the agent write everything it saves on the agent
	// channel, in its own words, as a model behind custody's MCP gateway
	// does: the model has no channel to choose, and the gateway records
	// what it read as observations of the session.
	Restate bool `json:"restate,omitempty"`
	// Ask makes the gateway put a gate's confirm to the owner, as through
	// MCP elicitation: she confirms a value she stated herself and
	// declines any other; without it the agent refuses on confirm.
	Ask bool `json:"ask,omitempty"`
}

// PermissivePolicy admits every candidate. The undefended cells use it.
const PermissivePolicy = "permit (principal, action, resource);\n"

// Cells are the defence cells, in report order.
var Cells = []Cell{
	{Name: "none", Summary: "permissive policy, no lineage, no gate; every write on channel user", Permissive: true, Collapse: true},
	{Name: "channel+quarantine", Summary: "default policy, channels from credentials, no lineage, no gate"},
	{Name: "signatures", Summary: "permissive policy, real channels in the signed log, no lineage, no gate", Permissive: true},
	{Name: "lineage", Summary: "default policy, lineage and session floor, no gate", Lineage: true},
	{Name: "full", Summary: "default policy, lineage and session floor, action gate", Lineage: true, Gate: true},
	{Name: "gateway-channel", Summary: "as channel+quarantine, but every save restated on the agent channel (a model behind the MCP gateway)", Restate: true},
	{Name: "gateway-full", Summary: "as full, but every save restated on the agent channel and the gate's confirm put to the owner (a model behind the MCP gateway)", Lineage: true, Gate: true, Restate: true, Ask: true},
}

// CellNamed finds a cell by name.
func CellNamed(name string) (Cell, error) {
	for _, c := range Cells {
		if c.Name == name {
			return c, nil
		}
	}
	return Cell{}, fmt.Errorf("poisonbench: unknown cell %q (cells: %s)", name, cellNames())
}

func cellNames() string {
	s := ""
	for i, c := range Cells {
		if i > 0 {
			s += ", "
		}
		s += c.Name
	}
	return s
}

// policyText is the admission policy the cell runs.
func (c Cell) policyText() []byte {
	if c.Permissive {
		return []byte(PermissivePolicy)
	}
	return custody.DefaultPolicyText()
}

// options are the service options of the cell, with the given clock.
func (c Cell) options(now func() time.Time) (custody.Options, error) {
	pol, err := custody.ParsePolicy(c.policyText())
	if err != nil {
		return custody.Options{}, err
	}
	return custody.Options{Policy: pol, DisableLineage: !c.Lineage, Now: now}, nil
}
