package memgraph

import (
	"context"
	"fmt"
	"slices"
	"strings"

	custody "github.com/custody-mem/custody"
)

// ObservationInput is one entity's new observations.
type ObservationInput struct {
	EntityName string   `json:"entityName" jsonschema:"The name of the entity to add the observations to"`
	Contents   []string `json:"contents" jsonschema:"An array of observation contents to add"`
}

// ObservationResult is what add_observations added to one entity.
type ObservationResult struct {
	EntityName        string   `json:"entityName"`
	AddedObservations []string `json:"addedObservations"`
}

// Deletion names observations to delete from one entity.
type Deletion struct {
	EntityName   string   `json:"entityName" jsonschema:"The name of the entity containing the observations"`
	Observations []string `json:"observations" jsonschema:"An array of observations to delete"`
}

// holder collects the writes admission did not admit.
type holder []Held

func (h *holder) note(what string, d *custody.Decision) bool {
	if d.State == custody.StateAdmitted {
		return true
	}
	*h = append(*h, Held{ID: d.ID, What: what, State: d.State, Reason: d.Reason})
	return false
}

// CreateEntities adds the entities whose names are not in the graph yet,
// as the reference does: two of one name in one call are both added, and
// an entity keeps its observations as given, repeated ones included. It
// returns those that were admitted.
func (g *Graph) CreateEntities(ctx context.Context, in []Entity) ([]Entity, []Held, error) {
	s, err := g.load(ctx)
	if err != nil {
		return nil, nil, err
	}
	var held holder
	out := []Entity{}
	seen := map[string]int{}
	for _, e := range in {
		if s.first(e.Name) != nil {
			continue
		}
		occ := seen[e.Name]
		seen[e.Name]++
		d, err := g.write(ctx, nsEntities, entityKey(e.Name, occ), encode(entityBody{Name: e.Name, EntityType: e.EntityType, Occurrence: occ}), "")
		if err != nil {
			return nil, nil, err
		}
		if !held.note(fmt.Sprintf("entity %q", e.Name), d) {
			continue
		}
		added := []string{}
		count := map[string]int{}
		for _, o := range e.Observations {
			n := count[o]
			count[o]++
			od, err := g.write(ctx, nsObservations, obsKey(e.Name, occ, o, n), encode(obsBody{Entity: e.Name, EntityOccurrence: occ, Content: o, Occurrence: n}), "")
			if err != nil {
				return nil, nil, err
			}
			if held.note(fmt.Sprintf("observation %q of %q", o, e.Name), od) {
				added = append(added, o)
			}
		}
		out = append(out, Entity{Name: e.Name, EntityType: e.EntityType, Observations: added})
	}
	return out, held, nil
}

// CreateRelations adds the relations not in the graph yet (one repeated in
// the call is added twice, as the reference does).
func (g *Graph) CreateRelations(ctx context.Context, in []Relation) ([]Relation, []Held, error) {
	s, err := g.load(ctx)
	if err != nil {
		return nil, nil, err
	}
	var held holder
	out := []Relation{}
	seen := map[Relation]int{}
	for _, r := range in {
		if slices.ContainsFunc(s.relations, func(x relationRec) bool { return x.Relation == r }) {
			continue
		}
		occ := seen[r]
		seen[r]++
		d, err := g.write(ctx, nsRelations, relationKey(r, occ), encode(relationBody{Relation: r, Occurrence: occ}), "")
		if err != nil {
			return nil, nil, err
		}
		if held.note(fmt.Sprintf("relation %s %s %s", r.From, r.RelationType, r.To), d) {
			out = append(out, r)
		}
	}
	return out, held, nil
}

// AddObservations adds to each entity (the first of its name) the contents
// it does not have yet; contents repeated in one entry are added as many
// times. Every entity must exist; if one does not, nothing is written.
func (g *Graph) AddObservations(ctx context.Context, in []ObservationInput) ([]ObservationResult, []Held, error) {
	s, err := g.load(ctx)
	if err != nil {
		return nil, nil, err
	}
	for _, o := range in {
		if s.first(o.EntityName) == nil {
			return nil, nil, &custody.Error{Kind: custody.ErrNotFound, Field: "entityName",
				Msg: fmt.Sprintf("Entity with name %s not found", o.EntityName)}
		}
	}
	var held holder
	out := []ObservationResult{}
	for _, o := range in {
		e := s.first(o.EntityName)
		res := ObservationResult{EntityName: o.EntityName, AddedObservations: []string{}}
		var fresh []string
		for _, c := range o.Contents {
			if !slices.ContainsFunc(e.obs, func(x obsRec) bool { return x.content == c }) {
				fresh = append(fresh, c)
			}
		}
		for _, c := range fresh {
			n := 0
			for _, x := range e.obs {
				if x.content == c {
					n++
				}
			}
			key := obsKey(e.Name, e.occ, c, n)
			d, err := g.write(ctx, nsObservations, key, encode(obsBody{Entity: e.Name, EntityOccurrence: e.occ, Content: c, Occurrence: n}), "")
			if err != nil {
				return nil, nil, err
			}
			// held or not, it counts for the next repetition's occurrence
			e.obs = append(e.obs, obsRec{key: key, content: c, occ: n})
			if held.note(fmt.Sprintf("observation %q of %q", c, e.Name), d) {
				res.AddedObservations = append(res.AddedObservations, c)
			}
		}
		out = append(out, res)
	}
	return out, held, nil
}

// DeleteEntities deletes the named entities (every one of each name), their
// observations and every relation from or to those names.
func (g *Graph) DeleteEntities(ctx context.Context, names []string) ([]Held, error) {
	s, err := g.load(ctx)
	if err != nil {
		return nil, err
	}
	var held holder
	for _, name := range uniq(names) {
		for _, e := range s.byName[name] {
			for _, o := range e.obs {
				if err := g.tombstone(ctx, &held, nsObservations, o.key, obsBody{Entity: name, EntityOccurrence: e.occ, Content: o.content, Occurrence: o.occ, Deleted: true},
					fmt.Sprintf("deletion of observation %q of %q", o.content, name)); err != nil {
					return nil, err
				}
			}
			if err := g.tombstone(ctx, &held, nsEntities, e.key, entityBody{Name: name, EntityType: e.EntityType, Occurrence: e.occ, Deleted: true},
				fmt.Sprintf("deletion of entity %q", name)); err != nil {
				return nil, err
			}
		}
	}
	for _, r := range s.relations {
		if slices.Contains(names, r.From) || slices.Contains(names, r.To) {
			if err := g.deleteRelation(ctx, &held, r); err != nil {
				return nil, err
			}
		}
	}
	return held, nil
}

// DeleteObservations deletes, from the first entity of each name, every
// observation with one of the contents; unknown entities and contents are
// ignored.
func (g *Graph) DeleteObservations(ctx context.Context, in []Deletion) ([]Held, error) {
	s, err := g.load(ctx)
	if err != nil {
		return nil, err
	}
	var held holder
	done := map[string]bool{}
	for _, del := range in {
		e := s.first(del.EntityName)
		if e == nil {
			continue
		}
		for _, o := range e.obs {
			if slices.Contains(del.Observations, o.content) && !done[o.key] {
				done[o.key] = true
				if err := g.tombstone(ctx, &held, nsObservations, o.key, obsBody{Entity: e.Name, EntityOccurrence: e.occ, Content: o.content, Occurrence: o.occ, Deleted: true},
					fmt.Sprintf("deletion of observation %q of %q", o.content, e.Name)); err != nil {
					return nil, err
				}
			}
		}
	}
	return held, nil
}

// DeleteRelations deletes the named relations (each copy); unknown ones are ignored.
func (g *Graph) DeleteRelations(ctx context.Context, in []Relation) ([]Held, error) {
	s, err := g.load(ctx)
	if err != nil {
		return nil, err
	}
	var held holder
	for _, r := range s.relations {
		if slices.Contains(in, r.Relation) {
			if err := g.deleteRelation(ctx, &held, r); err != nil {
				return nil, err
			}
		}
	}
	return held, nil
}

func (g *Graph) deleteRelation(ctx context.Context, held *holder, r relationRec) error {
	return g.tombstone(ctx, held, nsRelations, r.key, relationBody{Relation: r.Relation, Occurrence: r.occ, Deleted: true},
		fmt.Sprintf("deletion of relation %s %s %s", r.From, r.RelationType, r.To))
}

func (g *Graph) tombstone(ctx context.Context, held *holder, sub, key string, body any, what string) error {
	d, err := g.write(ctx, sub, key, encode(body), "")
	if err != nil {
		return err
	}
	held.note(what, d)
	return nil
}

// ReadGraph returns the whole graph.
func (g *Graph) ReadGraph(ctx context.Context) (KnowledgeGraph, error) {
	s, err := g.load(ctx)
	if err != nil {
		return KnowledgeGraph{}, err
	}
	return s.graph(nil, nil), nil
}

// SearchNodes returns the entities whose name, type or an observation
// contains query (case-insensitive), and the relations from or to them.
func (g *Graph) SearchNodes(ctx context.Context, query string) (KnowledgeGraph, error) {
	s, err := g.load(ctx)
	if err != nil {
		return KnowledgeGraph{}, err
	}
	q := strings.ToLower(query)
	has := func(t string) bool { return strings.Contains(strings.ToLower(t), q) }
	return s.subgraph(func(e *entityRec) bool {
		return has(e.Name) || has(e.EntityType) || slices.ContainsFunc(e.obs, func(o obsRec) bool { return has(o.content) })
	}), nil
}

// OpenNodes returns the named entities and the relations from or to them.
func (g *Graph) OpenNodes(ctx context.Context, names []string) (KnowledgeGraph, error) {
	s, err := g.load(ctx)
	if err != nil {
		return KnowledgeGraph{}, err
	}
	return s.subgraph(func(e *entityRec) bool { return slices.Contains(names, e.Name) }), nil
}

func (s *state) subgraph(keep func(*entityRec) bool) KnowledgeGraph {
	in := map[string]bool{}
	for _, e := range s.entities {
		if keep(e) {
			in[e.Name] = true
		}
	}
	return s.graph(keep, func(r Relation) bool { return in[r.From] || in[r.To] })
}

func uniq(ss []string) []string {
	var out []string
	for _, s := range ss {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
