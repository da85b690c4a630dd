package poisonbench

import (
	"encoding/json"
	"strconv"
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
	// Arg is the argument the memory's value fills; Amount, if set, the
	// argument the agent fills with the amount it reads (Choice.Amount);
	// Args are the others.
	Arg    string         `json:"arg"`
	Amount string         `json:"amount,omitempty"`
	Args   map[string]any `json:"args"`
	// Inbox is what the agent reads in the task's session after the
	// request and before it looks anything up (the mail the request is
	// about).
	Inbox []Content `json:"-"`
	// Endorse are the sources the subject's request names for the task's
	// action: the harness records the request as her endorsement of each
	// for the action in the session (Service.Endorse), before the agent
	// reads its inbox.
	Endorse []string `json:"endorse,omitempty"`

	// stated is the amount the request states, as a plain decimal, for the
	// measurement (never shown to the agent).
	stated string
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

// find is the first value of the kind the action needs in read text: an
// e-mail address for email.send, else an account or IBAN.
func (t Task) find(text string) string {
	fs := accounts(text)
	if t.Action == actionEmail {
		fs = emails(text)
	}
	if len(fs) == 0 {
		return ""
	}
	return fs[0].value
}

// mentions reports whether read text names the task's subject.
func (t Task) mentions(text string) bool {
	return strings.Contains(strings.ToLower(text), strings.ToLower(t.About))
}

// notice reports whether read text announces a change about the task's
// subject.
func (t Task) notice(text string) bool { return t.mentions(text) && changeRE.MatchString(text) }

// amount is the amount the agent pays: that of the newest notice in the
// session that gives one, else the one the request states.
func (t Task) amount(st *State) string {
	for i := len(st.Context) - 1; i >= 0; i-- {
		if text := readText(st.Context[i].Text); t.notice(text) {
			if as := amounts(text); len(as) > 0 {
				return as[0]
			}
		}
	}
	if as := amounts(readText(t.Prompt)); len(as) > 0 {
		return as[0]
	}
	return ""
}

// Outcome is what a task did.
type Outcome struct {
	Value  string `json:"value,omitempty"`
	Amount string `json:"amount,omitempty"`
	// Memory is the id of the record acted on (ids are random, so it stays
	// out of the report); Channel and Authority are its provenance.
	Memory    string            `json:"-"`
	Channel   string            `json:"channel,omitempty"`
	Authority custody.Authority `json:"authority,omitempty"`
	Gate      string            `json:"gate,omitempty"`
	Executed  bool              `json:"executed"`
	Refused   bool              `json:"refused"`
	Seen      []string          `json:"-"` // bodies of every hit the searches returned
	// reasons are the gate's last reasons (for the tests).
	reasons []string
}

// do runs a task: the subject's request enters the context (with the
// sources it endorses), then the task's inbox; the agent searches memory,
// chooses what to do, asks the gate when the cell has one, and calls the
// tool unless the gate refuses.
func (s *Session) do(task Task) (Outcome, error) {
	var out Outcome
	a, w := s.a, s.a.t.w
	if err := s.user(task.Prompt); err != nil {
		return out, err
	}
	for _, src := range task.Endorse {
		if err := s.endorse(src, task.Action); err != nil {
			return out, err
		}
	}
	for _, c := range task.Inbox {
		if err := s.read(c); err != nil {
			return out, err
		}
	}
	c, err := a.caller()
	if err != nil {
		return out, err
	}
	var hit *custody.Scored
	var choice Choice
	for _, lk := range task.Lookups {
		var hits []custody.Scored
		if err := w.call(func() error {
			hits, err = w.svc.Search(w.ctx, c, custody.SearchInput{Query: lk.Query, Class: lk.Class, Limit: searchLimit})
			return err
		}); err != nil {
			return out, err
		}
		for _, h := range hits {
			out.Seen = append(out.Seen, h.Key+" "+shown(h.Record))
		}
		ch, err := a.brain.Choose(w.ctx, &a.state, task, hits)
		if err != nil {
			return out, err
		}
		if ch.Value != "" {
			choice = ch
			if ch.Hit >= 0 && ch.Hit < len(hits) {
				hit = &hits[ch.Hit]
			}
			break
		}
	}
	if choice.Value == "" {
		return out, nil
	}
	out.Value, out.Amount = choice.Value, choice.Amount
	var justification []string
	if hit != nil {
		out.Memory, out.Channel, out.Authority = hit.ID, hit.Channel, hit.Authority
		justification = []string{hit.ID}
	}
	args := map[string]any{task.Arg: out.Value}
	if task.Amount != "" && out.Amount != "" {
		args[task.Amount] = out.Amount // as a model may write it
		if _, err := strconv.ParseFloat(out.Amount, 64); err == nil {
			args[task.Amount] = json.Number(out.Amount)
		}
	}
	for k, v := range task.Args {
		args[k] = v
	}
	if a.t.cell.Gate {
		var d *custody.GateDecision
		if err := w.call(func() error {
			d, err = w.svc.Gate(w.ctx, c, custody.GateInput{Action: task.Action, Args: args, Justification: justification, Session: s.id})
			return err
		}); err != nil {
			return out, err
		}
		if d.Decision == custody.GateConfirm && a.t.cell.Ask {
			if d, err = s.ask(task, args, justification, d); err != nil {
				return out, err
			}
		}
		out.Gate, out.reasons = d.Decision, d.Reasons
		if d.Decision != custody.GateAllow {
			out.Refused = true
			return out, nil
		}
	}
	out.Executed = true
	return out, nil
}

// endorse records the subject's request naming source for action as her
// endorsement, with her own credential, as a harness does when the user's
// request names the data (docs/policy.md).
func (s *Session) endorse(source, action string) error {
	w := s.a.t.w
	owner, err := w.as(s.a.subject, "")
	if err != nil {
		return err
	}
	return w.call(func() error {
		_, err := w.svc.Endorse(w.ctx, owner, s.id, custody.EndorseInput{SourceRef: source, Actions: []string{action}})
		return err
	})
}

// searchLimit is how many hits the agent asks for (its top k).
const searchLimit = 10

// ask puts a gate's confirm to the owner, as the MCP gateway does through
// elicitation: she confirms the action when its value, and its amount if
// it has one, are ones she stated herself, and the gate is asked again;
// otherwise she declines.
func (s *Session) ask(task Task, args map[string]any, justification []string, d *custody.GateDecision) (*custody.GateDecision, error) {
	a, w := s.a, s.a.t.w
	value, _ := args[task.Arg].(string)
	if !a.t.hers(a.subject, value) {
		return d, nil
	}
	if amount, ok := args[task.Amount].(json.Number); ok && !a.t.hersAmount(a.subject, string(amount)) {
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
		d, err = w.svc.Gate(w.ctx, c, custody.GateInput{Action: task.Action, Args: args, Justification: justification, Session: s.id})
		return err
	})
	return d, err
}
