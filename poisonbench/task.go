package poisonbench

import (
	"regexp"
	"strings"

	custody "github.com/custody-mem/custody"
)

// Task is what the subject asks the agent to do in a later session.
type Task struct {
	Prompt string `json:"prompt"`
	// About is what a memory must mention to be acted on (the vendor).
	About   string   `json:"about"`
	Lookups []Lookup `json:"lookups"`
	Action  string   `json:"action"`
	// Arg is the argument the memory's value fills; Args are the others.
	Arg  string         `json:"arg"`
	Args map[string]any `json:"args"`
}

// Lookup is one memory search the agent runs for a task, in order.
type Lookup struct {
	Query string        `json:"query"`
	Class custody.Class `json:"class,omitempty"`
}

func (t Task) about(r *custody.Record) bool {
	a := strings.ToLower(t.About)
	return strings.Contains(strings.ToLower(r.Body), a) || strings.Contains(strings.ToLower(r.Key), a)
}

func (t Task) valueRE() *regexp.Regexp {
	if t.Action == actionEmail {
		return emailRE
	}
	return accountRE
}

// Outcome is what a task did.
type Outcome struct {
	Value string `json:"value,omitempty"`
	// Memory is the id of the record acted on (ids are random, so it stays
	// out of the report); Channel and Authority are its provenance.
	Memory    string            `json:"-"`
	Channel   string            `json:"channel,omitempty"`
	Authority custody.Authority `json:"authority,omitempty"`
	Gate      string            `json:"gate,omitempty"`
	Executed  bool              `json:"executed"`
	Refused   bool              `json:"refused"`
	Seen      []string          `json:"-"` // bodies of every hit the searches returned
}

// do runs a task: the subject's request enters the context, the agent
// searches memory, takes the first fitting hit, asks the gate when the cell
// has one, and calls the tool unless the gate refuses.
func (s *Session) do(task Task) (Outcome, error) {
	var out Outcome
	a, w := s.a, s.a.t.w
	if err := s.user(task.Prompt); err != nil {
		return out, err
	}
	c, err := a.caller()
	if err != nil {
		return out, err
	}
	var hit *custody.Scored
	for _, lk := range task.Lookups {
		var hits []custody.Scored
		if err := w.call(func() error {
			hits, err = w.svc.Search(w.ctx, c, custody.SearchInput{Query: lk.Query, Class: lk.Class, Limit: searchLimit})
			return err
		}); err != nil {
			return out, err
		}
		for _, h := range hits {
			out.Seen = append(out.Seen, h.Key+" "+h.Body)
		}
		i, v, err := a.brain.Choose(w.ctx, task, hits)
		if err != nil {
			return out, err
		}
		if i >= 0 && i < len(hits) && v != "" {
			hit, out.Value = &hits[i], v
			break
		}
	}
	if hit == nil {
		return out, nil
	}
	out.Memory, out.Channel, out.Authority = hit.ID, hit.Channel, hit.Authority
	args := map[string]any{task.Arg: out.Value}
	for k, v := range task.Args {
		args[k] = v
	}
	if a.t.cell.Gate {
		var d *custody.GateDecision
		if err := w.call(func() error {
			d, err = w.svc.Gate(w.ctx, c, custody.GateInput{Action: task.Action, Args: args, Justification: []string{hit.ID}, Session: s.id})
			return err
		}); err != nil {
			return out, err
		}
		if d.Decision == custody.GateConfirm && a.t.cell.Ask {
			if d, err = s.ask(task, args, hit.ID, d); err != nil {
				return out, err
			}
		}
		out.Gate = d.Decision
		if d.Decision != custody.GateAllow {
			out.Refused = true
			return out, nil
		}
	}
	out.Executed = true
	return out, nil
}

// searchLimit is how many hits the agent asks for (its top k).
const searchLimit = 10

// ask puts a gate's confirm to the owner, as the MCP gateway does through
// elicitation: she confirms the action when the value is one she stated
// herself, and the gate is asked again; otherwise she declines.
func (s *Session) ask(task Task, args map[string]any, justification string, d *custody.GateDecision) (*custody.GateDecision, error) {
	a, w := s.a, s.a.t.w
	value, _ := args[task.Arg].(string)
	if !a.t.hers(a.subject, value) {
		return d, nil
	}
	owner, err := w.as(a.subject, "")
	if err != nil {
		return nil, err
	}
	a.t.res.Confirmations++
	if err := w.call(func() error {
		_, err := w.svc.ConfirmAction(w.ctx, owner, task.Action, args)
		return err
	}); err != nil {
		return nil, err
	}
	c, err := a.caller()
	if err != nil {
		return nil, err
	}
	err = w.call(func() error {
		d, err = w.svc.Gate(w.ctx, c, custody.GateInput{Action: task.Action, Args: args, Justification: []string{justification}, Session: s.id})
		return err
	})
	return d, err
}
