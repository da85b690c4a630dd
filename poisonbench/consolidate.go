package poisonbench

import (
	"fmt"
	"slices"
	"strings"

	custody "github.com/custody-mem/custody"
)

// compact is the consolidation job a memory layer runs in the background:
// it summarises, by concatenation, the
// subject's notes that mention topic into one fact derived from them, each
// parent weighing the same.
func (a *Agent) compact(topic string) error {
	notes, err := a.notes()
	if err != nil {
		return err
	}
	var about []*custody.Record
	for _, n := range notes {
		if strings.Contains(strings.ToLower(n.Body), strings.ToLower(topic)) {
			about = append(about, n)
		}
	}
	if len(about) == 0 {
		return nil
	}
	bodies := make([]string, len(about))
	for i, n := range about {
		bodies[i] = n.Body
	}
	return a.derive(fmt.Sprintf("Summary of my notes about %s: %s", topic, strings.Join(bodies, " | ")), about)
}

// promote is the consolidation job's other half: a value that recurs in at
// least min notes is promoted to a fact derived from them, each parent
// weighing the same.
func (a *Agent) promote(min int) error {
	notes, err := a.notes()
	if err != nil {
		return err
	}
	byValue := map[string][]*custody.Record{}
	var order []string
	for _, n := range notes {
		v := valueRE.FindString(n.Body)
		if v == "" {
			continue
		}
		if _, ok := byValue[v]; !ok {
			order = append(order, v)
		}
		byValue[v] = append(byValue[v], n)
	}
	for _, v := range order {
		if ns := byValue[v]; len(ns) >= min {
			if err := a.derive(fmt.Sprintf("Seen in %d notes: %s", len(ns), ns[0].Body), ns); err != nil {
				return err
			}
		}
	}
	return nil
}

// notes lists the subject's notes, oldest first.
func (a *Agent) notes() ([]*custody.Record, error) {
	w := a.t.w
	c, err := a.caller()
	if err != nil {
		return nil, err
	}
	var page *custody.Page
	if err := w.call(func() error {
		page, err = w.svc.List(w.ctx, c, custody.ListInput{Namespace: nsNotes, Class: custody.ClassEpisode, Limit: custody.MaxListLimit})
		return err
	}); err != nil {
		return nil, err
	}
	out := slices.Clone(page.Items)
	slices.Reverse(out)
	return out, nil
}

// derive writes a derived fact on the derive channel with an edge to each
// parent; its weight is the parent's share of the body.
func (a *Agent) derive(body string, parents []*custody.Record) error {
	t := a.t
	ch := custody.ChannelDerive
	if t.cell.Collapse {
		ch = custody.ChannelUser
	}
	edges := make([]custody.Edge, len(parents))
	poison := false
	for i, p := range parents {
		edges[i] = custody.Edge{ID: p.ID, Weight: 1 / float64(len(parents))}
		poison = poison || t.poisoned[p.ID]
	}
	d, err := t.w.remember(harness, a.subject, custody.Candidate{Namespace: nsProfile, Class: custody.ClassFact, Body: body,
		Channel: ch, DerivedFrom: edges, SourceRef: "consolidation"})
	if err != nil {
		return err
	}
	t.track(d, poison)
	return nil
}
