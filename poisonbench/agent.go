package poisonbench

import (
	"context"
	"maps"

	custody "github.com/custody-mem/custody"
)

// Content is something that enters the agent's context.
type Content struct {
	// Channel is where it came from: "user" for the subject's own turns,
	// "tool:email" or "tool:web" for what a tool returned.
	Channel string
	// Source is a reference to the original (a mail id, a URL).
	Source string
	Text   string
	// Poison marks the attacker's content. Only the measurement reads it;
	// the agent and the service never see it.
	Poison bool
	// Observed is the text the harness records as observed when it is not
	// Text: for a tool result with structured content, what custody's MCP
	// gateway records (gateway.Text), where the model is shown the result
	// as its client passes it on (toolResult).
	Observed string
	// Metadata are the fields of a tool result that the harness files as
	// the metadata of a record when the agent keeps the result as it is.
	Metadata map[string]string
	// Reviewed marks an upstream tool listing whose descriptions the
	// operator pinned as reviewed: the gateway does not record it as
	// observed (docs/mcp.md), though the model reads it.
	Reviewed bool
}

// Save is a memory the agent decides to write. The agent proposes content
// and a class, never a channel, audience or state: the harness sets those.
type Save struct {
	Key   string        `json:"key,omitempty"`
	Class custody.Class `json:"class"`
	Body  string        `json:"body"`
	// Verbatim means the body is the content as read; the harness then
	// writes it on the channel the content came from. Otherwise the agent
	// restated it and the harness writes it on the agent channel.
	Verbatim bool `json:"verbatim"`
	// Shared means the agent used the team memory tool, which a team
	// deployment offers: the harness writes it with audience tenant.
	Shared bool `json:"shared,omitempty"`
}

// State is what the agent carries from one session to the next (its
// standing instructions) and the subject's profile, loaded once a session.
type State struct {
	// Instructions are the subject's standing instructions, as typed.
	Instructions []string
	// Retain are topics the subject asked it to save anything about.
	Retain []string
	// Notes: the subject asked it to keep notes of everything it reads.
	Notes bool
	// Note are topics (as words) the subject asked it to note from what it
	// reads; it restates them as keyed facts.
	Note [][]string
	// Team: the deployment offers a memory bank shared by the whole team,
	// and the agent writes a team note from each question it answers.
	Team bool
	// Context is what entered the agent's context in the current session,
	// in order: the subject's turns and what the tools returned.
	Context []Content
	// profile loads the subject's keyed facts (key to body) once per
	// session, when a rule needs them.
	profile func() (map[string]string, error)
	loaded  map[string]string
}

// Profile returns the subject's keyed facts, key to body, loading them from
// memory on first use in a session.
func (st *State) Profile() (map[string]string, error) {
	if st.loaded == nil && st.profile != nil {
		p, err := st.profile()
		if err != nil {
			return nil, err
		}
		st.loaded = p
	}
	return st.loaded, nil
}

// A Brain decides what the agent saves from what it reads and which memory
// it acts on. The scripted brain always complies; a model brain asks an LLM.
type Brain interface {
	// Read returns what to save after c entered the context; it may update
	// the standing instructions in st when c is the subject's own turn.
	Read(ctx context.Context, st *State, c Content) ([]Save, error)
	// Choose decides how to do task from the session's context (st) and
	// ranked hits: the value of the task's argument, the memory it relies
	// on (cited to the gate as the justification) and, for a task that
	// names an amount, the amount. A Choice without a value does nothing.
	Choose(ctx context.Context, st *State, task Task, hits []custody.Scored) (Choice, error)
}

// Choice is what the agent decided for a task.
type Choice struct {
	// Hit is the index among the hits of the memory relied on, -1 for none.
	Hit int
	// Value fills the task's argument (Task.Arg).
	Value string
	// Amount fills Task.Amount, as a plain decimal ("1200"); "" for none.
	Amount string
}

// Agent is the agent of one subject, working through the harness's
// credential.
type Agent struct {
	t       *trial
	subject string
	brain   Brain
	state   State
}

// Session is one run of the agent.
type Session struct {
	a  *Agent
	id string
}

func (a *Agent) caller() (*custody.Caller, error) { return a.t.w.as(harness, a.subject) }

// open starts a session; the subject's profile loads when first needed.
func (a *Agent) open() (*Session, error) {
	w := a.t.w
	c, err := a.caller()
	if err != nil {
		return nil, err
	}
	var sess *custody.Session
	if err := w.call(func() error {
		sess, err = w.svc.OpenSession(w.ctx, c)
		return err
	}); err != nil {
		return nil, err
	}
	a.state.loaded, a.state.Context = nil, nil
	a.state.profile = func() (map[string]string, error) {
		var page *custody.Page
		if err := w.call(func() error {
			var err error
			page, err = w.svc.List(w.ctx, c, custody.ListInput{Namespace: nsProfile, Class: custody.ClassFact})
			return err
		}); err != nil {
			return nil, err
		}
		p := map[string]string{}
		for _, r := range page.Items {
			if r.Key != "" {
				p[r.Key] = r.Body
			}
		}
		return p, nil
	}
	return &Session{a: a, id: sess.ID}, nil
}

// Namespaces the harness files memories under, by class.
const (
	nsProfile = "profile"
	nsNotes   = "notes"
	nsSkills  = "skills"
	nsPrefs   = "prefs"
)

func namespaceFor(c custody.Class) string {
	switch c {
	case custody.ClassEpisode:
		return nsNotes
	case custody.ClassProcedure:
		return nsSkills
	case custody.ClassPreference:
		return nsPrefs
	}
	return nsProfile
}

// read puts c in the agent's context: the harness records the observation,
// then writes what the agent decides to save.
func (s *Session) read(c Content) error {
	a, w := s.a, s.a.t.w
	if c.Channel == custody.ChannelUser && !c.Poison {
		a.t.say(a.subject, c.Text)
	}
	caller, err := a.caller()
	if err != nil {
		return err
	}
	observed := c.Observed
	if observed == "" {
		observed = c.Text
	}
	if !c.Reviewed {
		if err := w.call(func() error {
			_, err := w.svc.Observe(w.ctx, caller, s.id, custody.ObservationInput{Channel: c.Channel, Text: observed, SourceRef: c.Source})
			return err
		}); err != nil {
			return err
		}
	}
	a.state.Context = append(a.state.Context, c)
	saves, err := a.brain.Read(w.ctx, &a.state, c)
	if err != nil {
		return err
	}
	for _, sv := range saves {
		if err := s.save(c, sv); err != nil {
			return err
		}
	}
	return nil
}

// user is a turn the subject types.
func (s *Session) user(text string) error {
	return s.read(Content{Channel: custody.ChannelUser, Text: text})
}

// save writes one of the agent's saves. The channel is the content's when
// saved verbatim and agent when restated; an undefended layer writes
// everything on user. A tool result kept as it is is filed with its
// fields as metadata. When the write waits for the owner's confirmation,
// the owner confirms it if it came from her own turn and declines it
// otherwise.
func (s *Session) save(c Content, sv Save) error {
	a, t := s.a, s.a.t
	ch := custody.ChannelAgent
	if sv.Verbatim && !t.cell.Restate {
		ch = c.Channel
	}
	if t.cell.Collapse {
		ch = custody.ChannelUser
	}
	aud := custody.AudienceOwner
	if sv.Shared && a.state.Team {
		aud = custody.AudienceTenant
	}
	var md custody.Metadata
	if sv.Verbatim && len(c.Metadata) > 0 {
		md = custody.Metadata(maps.Clone(c.Metadata))
	}
	d, err := t.w.remember(harness, a.subject, custody.Candidate{Namespace: namespaceFor(sv.Class), Key: sv.Key, Class: sv.Class,
		Body: sv.Body, Channel: ch, Audience: aud, Session: s.id, SourceRef: c.Source, Metadata: md})
	if err != nil {
		return err
	}
	t.track(d, c.Poison)
	if d.State == custody.StatePendingConfirmation {
		return t.ownerDecides(a.subject, d, c.Channel == custody.ChannelUser)
	}
	return nil
}
