// Package memgraph serves the knowledge graph of the reference MCP memory
// server (@modelcontextprotocol/server-memory): its nine tools with their
// input schemas, on custody memories instead of a JSONL file.
//
// Every entity, observation and relation is its own keyed record, written
// through admission on the server's channel in the MCP session's custody
// session, with provenance and a log entry like any other memory. A
// deletion is a new version of the record that marks it deleted. Because
// no write rewrites the whole graph, processes that share a store lose
// nothing to each other; and what admission holds (quarantined, waiting
// for confirmation) is not part of the graph until it is admitted.
package memgraph

import (
	"context"
	"fmt"
	"slices"
	"strings"

	custody "github.com/custody-mem/custody"
)

// Entity is a node of the graph, as the reference server has it.
type Entity struct {
	Name         string   `json:"name" jsonschema:"The name of the entity"`
	EntityType   string   `json:"entityType" jsonschema:"The type of the entity"`
	Observations []string `json:"observations" jsonschema:"An array of observation contents associated with the entity"`
}

// Relation is a directed, typed edge between two entities' names.
type Relation struct {
	From         string `json:"from" jsonschema:"The name of the entity where the relation starts"`
	To           string `json:"to" jsonschema:"The name of the entity where the relation ends"`
	RelationType string `json:"relationType" jsonschema:"The type of the relation"`
}

// KnowledgeGraph is the graph, or the part of it an answer covers.
type KnowledgeGraph struct {
	Entities  []Entity   `json:"entities"`
	Relations []Relation `json:"relations"`
}

// Backend is what the graph needs of custody for one caller.
type Backend interface {
	List(ctx context.Context, in custody.ListInput) (*custody.Page, error)
	Remember(ctx context.Context, in custody.Candidate) (*custody.Decision, error)
}

// Local is the Backend of caller c on the service in this process.
func Local(svc *custody.Service, c *custody.Caller) Backend { return local{svc, c} }

type local struct {
	svc *custody.Service
	c   *custody.Caller
}

func (l local) List(ctx context.Context, in custody.ListInput) (*custody.Page, error) {
	return l.svc.List(ctx, l.c, in)
}

func (l local) Remember(ctx context.Context, in custody.Candidate) (*custody.Decision, error) {
	return l.svc.Remember(ctx, l.c, in)
}

// Held is a write that admission did not admit: it is not part of the graph.
type Held struct {
	ID     string // the held version, which the owner confirms or a reviewer approves
	What   string
	State  custody.State
	Reason string
}

func (h Held) String() string {
	return fmt.Sprintf("%s: %s (%s; id %s)", h.What, h.State, h.Reason, h.ID)
}

// Confirmer is a Backend through which the owner confirms a version that
// waits for her (custody's Confirm): the graph's deletions of sensitive
// names, confirmed by answering an elicitation.
type Confirmer interface {
	Confirm(ctx context.Context, id string) (*custody.Record, error)
}

func (l local) Confirm(ctx context.Context, id string) (*custody.Record, error) {
	return l.svc.Confirm(ctx, l.c, id)
}

// Graph is the knowledge graph of one caller, in one custody session.
type Graph struct {
	b         Backend
	namespace string // the root namespace, e.g. "graph"
	channel   string
	session   string
}

// New returns the graph stored under namespace (e.g. "graph"), written on
// channel in custody session (which may be empty).
func New(b Backend, namespace, channel, session string) (*Graph, error) {
	if err := custody.ValidNamespace(namespace + "/" + nsEntities); err != nil {
		return nil, err
	}
	return &Graph{b: b, namespace: namespace, channel: channel, session: session}, nil
}

// state is the graph as stored: the live records behind it, in the order
// they were written (the reference's order: its file keeps entities,
// observations and relations in the order they were added).
type state struct {
	entities  []*entityRec
	byName    map[string][]*entityRec // the entities of one name, oldest first
	relations []relationRec
}

type entityRec struct {
	key string
	occ int
	Entity
	obs []obsRec
}

type obsRec struct {
	key     string
	content string
	occ     int
}

type relationRec struct {
	key string
	occ int
	Relation
}

// first is the entity the reference finds by name: the oldest of that name.
func (s *state) first(name string) *entityRec {
	if es := s.byName[name]; len(es) > 0 {
		return es[0]
	}
	return nil
}

func (s *state) graph(keep func(*entityRec) bool, keepRel func(Relation) bool) KnowledgeGraph {
	g := KnowledgeGraph{Entities: []Entity{}, Relations: []Relation{}}
	for _, e := range s.entities {
		if keep == nil || keep(e) {
			ent := Entity{Name: e.Name, EntityType: e.EntityType, Observations: []string{}}
			for _, o := range e.obs {
				ent.Observations = append(ent.Observations, o.content)
			}
			g.Entities = append(g.Entities, ent)
		}
	}
	for _, r := range s.relations {
		if keepRel == nil || keepRel(r.Relation) {
			g.Relations = append(g.Relations, r.Relation)
		}
	}
	return g
}

// load reads the live graph: every eligible record of the three
// namespaces, oldest first, tombstones left out.
func (g *Graph) load(ctx context.Context) (*state, error) {
	s := &state{byName: map[string][]*entityRec{}}
	ents, err := g.list(ctx, nsEntities)
	if err != nil {
		return nil, err
	}
	for _, r := range ents {
		var b entityBody
		if !decode(r, &b) || b.Deleted {
			continue
		}
		e := &entityRec{key: r.Key, occ: b.Occurrence, Entity: Entity{Name: b.Name, EntityType: b.EntityType}}
		s.entities = append(s.entities, e)
		s.byName[b.Name] = append(s.byName[b.Name], e)
	}
	obs, err := g.list(ctx, nsObservations)
	if err != nil {
		return nil, err
	}
	for _, r := range obs {
		var b obsBody
		if !decode(r, &b) || b.Deleted {
			continue
		}
		i := slices.IndexFunc(s.byName[b.Entity], func(e *entityRec) bool { return e.occ == b.EntityOccurrence })
		if i < 0 {
			continue // of an entity deleted meanwhile
		}
		e := s.byName[b.Entity][i]
		e.obs = append(e.obs, obsRec{key: r.Key, content: b.Content, occ: b.Occurrence})
	}
	rels, err := g.list(ctx, nsRelations)
	if err != nil {
		return nil, err
	}
	for _, r := range rels {
		var b relationBody
		if !decode(r, &b) || b.Deleted {
			continue
		}
		s.relations = append(s.relations, relationRec{key: r.Key, occ: b.Occurrence, Relation: b.Relation})
	}
	return s, nil
}

// list returns every eligible record of one namespace, oldest first.
func (g *Graph) list(ctx context.Context, sub string) ([]*custody.Record, error) {
	var out []*custody.Record
	in := custody.ListInput{Namespace: g.namespace + "/" + sub, Limit: custody.MaxListLimit}
	for {
		p, err := g.b.List(ctx, in)
		if err != nil {
			return nil, err
		}
		out = append(out, p.Items...)
		if p.NextCursor == "" {
			break
		}
		in.Cursor = p.NextCursor
	}
	slices.SortFunc(out, func(a, b *custody.Record) int {
		switch {
		case a.LogIndex < b.LogIndex:
			return -1
		case a.LogIndex > b.LogIndex:
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// write submits one record; the decision says whether it is in force.
func (g *Graph) write(ctx context.Context, sub, key, body, ref string) (*custody.Decision, error) {
	return g.b.Remember(ctx, custody.Candidate{
		Namespace: g.namespace + "/" + sub, Key: key, Class: custody.ClassFact, Body: body,
		Channel: g.channel, Session: g.session, SourceRef: ref,
	})
}
