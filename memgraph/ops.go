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
	*h = append(*h, Held{What: what, State: d.State, Reason: d.Reason})
	return false
}

// CreateEntities adds the entities whose names are not in the graph yet and
// returns those that were admitted.
func (g *Graph) CreateEntities(ctx context.Context, in []Entity) ([]Entity, []Held, error) {
	s, err := g.load(ctx)
	if err != nil {
		return nil, nil, err
	}
	var held holder
	out := []Entity{}
	seen := map[string]bool{}
	for _, e := range in {
		if s.byName[e.Name] != nil || seen[e.Name] {
			continue
		}
		seen[e.Name] = true
		d, err := g.write(ctx, nsEntities, entityKey(e.Name), encode(entityBody{Name: e.Name, EntityType: e.EntityType}), "")
		if err != nil {
			return nil, nil, err
		}
		if !held.note(fmt.Sprintf("entity %q", e.Name), d) {
			continue
		}
		added := []string{}
		for _, o := range uniq(e.Observations) {
			od, err := g.write(ctx, nsObservations, obsKey(e.Name, o), encode(obsBody{Entity: e.Name, Content: o}), "")
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

// CreateRelations adds the relations not in the graph yet.
func (g *Graph) CreateRelations(ctx context.Context, in []Relation) ([]Relation, []Held, error) {
	s, err := g.load(ctx)
	if err != nil {
		return nil, nil, err
	}
	var held holder
	out := []Relation{}
	for _, r := range in {
		if slices.ContainsFunc(s.relations, func(x relationRec) bool { return x.Relation == r }) || slices.Contains(out, r) {
			continue
		}
		d, err := g.write(ctx, nsRelations, relationKey(r), encode(relationBody{Relation: r}), "")
		if err != nil {
			return nil, nil, err
		}
		if held.note(fmt.Sprintf("relation %s %s %s", r.From, r.RelationType, r.To), d) {
			out = append(out, r)
		}
	}
	return out, held, nil
}

// AddObservations adds the contents an entity does not have yet. Every
// entity must exist; if one does not, nothing is written.
func (g *Graph) AddObservations(ctx context.Context, in []ObservationInput) ([]ObservationResult, []Held, error) {
	s, err := g.load(ctx)
	if err != nil {
		return nil, nil, err
	}
	for _, o := range in {
		if s.byName[o.EntityName] == nil {
			return nil, nil, &custody.Error{Kind: custody.ErrNotFound, Field: "entityName",
				Msg: fmt.Sprintf("Entity with name %s not found", o.EntityName)}
		}
	}
	var held holder
	out := []ObservationResult{}
	for _, o := range in {
		e := s.byName[o.EntityName]
		res := ObservationResult{EntityName: o.EntityName, AddedObservations: []string{}}
		for _, c := range uniq(o.Contents) {
			if slices.ContainsFunc(e.obs, func(x obsRec) bool { return x.content == c }) {
				continue
			}
			d, err := g.write(ctx, nsObservations, obsKey(e.Name, c), encode(obsBody{Entity: e.Name, Content: c}), "")
			if err != nil {
				return nil, nil, err
			}
			if held.note(fmt.Sprintf("observation %q of %q", c, e.Name), d) {
				res.AddedObservations = append(res.AddedObservations, c)
				e.obs = append(e.obs, obsRec{key: obsKey(e.Name, c), content: c})
			}
		}
		out = append(out, res)
	}
	return out, held, nil
}

// DeleteEntities deletes the named entities, their observations and every
// relation from or to them.
func (g *Graph) DeleteEntities(ctx context.Context, names []string) ([]Held, error) {
	s, err := g.load(ctx)
	if err != nil {
		return nil, err
	}
	var held holder
	for _, name := range uniq(names) {
		e := s.byName[name]
		if e == nil {
			continue
		}
		for _, o := range e.obs {
			if err := g.tombstone(ctx, &held, nsObservations, o.key, obsBody{Entity: name, Content: o.content, Deleted: true},
				fmt.Sprintf("deletion of observation %q of %q", o.content, name)); err != nil {
				return nil, err
			}
		}
		if err := g.tombstone(ctx, &held, nsEntities, e.key, entityBody{Name: name, EntityType: e.EntityType, Deleted: true},
			fmt.Sprintf("deletion of entity %q", name)); err != nil {
			return nil, err
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

// DeleteObservations deletes observations; unknown entities and contents are ignored.
func (g *Graph) DeleteObservations(ctx context.Context, in []Deletion) ([]Held, error) {
	s, err := g.load(ctx)
	if err != nil {
		return nil, err
	}
	var held holder
	for _, del := range in {
		e := s.byName[del.EntityName]
		if e == nil {
			continue
		}
		for _, o := range e.obs {
			if slices.Contains(del.Observations, o.content) {
				if err := g.tombstone(ctx, &held, nsObservations, o.key, obsBody{Entity: e.Name, Content: o.content, Deleted: true},
					fmt.Sprintf("deletion of observation %q of %q", o.content, e.Name)); err != nil {
					return nil, err
				}
			}
		}
	}
	return held, nil
}

// DeleteRelations deletes the named relations; unknown ones are ignored.
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
	return g.tombstone(ctx, held, nsRelations, r.key, relationBody{Relation: r.Relation, Deleted: true},
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
