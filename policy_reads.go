package custody

import (
	"encoding/json"

	"github.com/cedar-policy/cedar-go"
)

// What a policy reads of an admission's input. The memo of decisions
// (admit_memo.go) keeps them by every field of the input a policy could
// read; a field that no policy of the set reads is left out of it, so that
// inputs differing only there share one decision. The record's key is
// such a field for most policies (the default one never reads it), and it
// differs on nearly every keyed write.

// readsContext reports whether a policy of set reads attribute attr of the
// request's context: as context.attr, context["attr"] or context has
// attr, or through the context record as a whole (compared with a record,
// put in a set), which could depend on any of its attributes. It reads
// each policy's JSON form, so that every way the Cedar text can spell an
// access is one node there; a policy it cannot read so is taken to read
// attr. It costs about 1.7 ms for the default policy (most of parsing
// it), once a policy text: parsed policies are kept by version.
func readsContext(set *cedar.PolicySet, attr string) bool {
	for _, pol := range set.All() {
		b, err := pol.MarshalJSON()
		if err != nil {
			return true
		}
		var tree any
		if err := json.Unmarshal(b, &tree); err != nil {
			return true
		}
		if readsAttr(tree, attr) {
			return true
		}
	}
	return false
}

// readsAttr reports whether the expression tree node reads attr of the
// context variable, or the context variable whole.
func readsAttr(node any, attr string) bool {
	switch n := node.(type) {
	case map[string]any:
		if isContextVar(n) {
			return true // the whole record
		}
		for op, arg := range n {
			if m, ok := arg.(map[string]any); ok && (op == "." || op == "has") && isContextVar(m["left"]) {
				if m["attr"] == attr {
					return true
				}
				continue // another attribute of the context
			}
			if readsAttr(arg, attr) {
				return true
			}
		}
	case []any:
		for _, x := range n {
			if readsAttr(x, attr) {
				return true
			}
		}
	}
	return false
}

// isContextVar reports whether node is the context variable itself.
func isContextVar(node any) bool {
	m, ok := node.(map[string]any)
	return ok && len(m) == 1 && m["Var"] == "context"
}
