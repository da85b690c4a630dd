package custody

import (
	"context"
	"errors"
)

// lineage is what a candidate's parents allow it: an authority cap, the
// intersection of their audiences, and the parents that are not eligible
// (design rule 6).
type lineage struct {
	authority  Authority
	audience   string
	ineligible []*Record
	weights    map[Authority]float64 // edge weight per parent authority
}

// parents loads and checks a candidate's parents. A parent that does not
// exist, belongs to another tenant or is outside the subject's audience is
// not found, indistinguishably.
func (s *Service) parents(ctx context.Context, tx Tx, c *Caller, edges []Edge) (lineage, error) {
	lin := lineage{authority: AuthorityConfirmed, audience: AudienceTenant}
	for _, e := range edges {
		p, err := tx.Record(ctx, c.Tenant(), e.ID)
		if errors.Is(err, ErrNotFound) || (err == nil && !AudienceIncludes(p.Audience, p.Owner, c.Subject.Name, c.Subject.Groups)) {
			return lin, notFound("parent " + e.ID)
		}
		if err != nil {
			return lin, err
		}
		lin.add(p, e.Weight)
	}
	lin.cap(s.opts.StrongEdge)
	return lin, nil
}

// add folds one parent in. Only parents in the subject's audience get here,
// so an owner-only parent is the subject's own.
func (lin *lineage) add(p *Record, weight float64) {
	if lin.weights == nil {
		lin.weights = map[Authority]float64{}
	}
	lin.weights[p.Authority] += weight
	lin.audience = narrowAudience(lin.audience, p.Audience)
	if p.State != StateAdmitted {
		lin.ineligible = append(lin.ineligible, p)
	}
}

// cap sets the authority a derived record may carry: the lowest authority
// whose parents, together with the parents below it, weigh at least the
// strong-edge threshold, and never more than its most trusted parent. One
// strong edge caps at its parent's authority, as rule 6 says; a weak edge
// alone does not; and many weak edges from untrusted sources (dilution:
// eight forum posts at weight 1/8 each) cap as one strong edge would.
func (lin *lineage) cap(strong float64) {
	if len(lin.weights) == 0 {
		return
	}
	top, sum := Authority(0), 0.0
	for a := AuthorityExternal; a <= AuthorityConfirmed; a++ {
		w, ok := lin.weights[a]
		if !ok {
			continue
		}
		top = a
		sum += w
		if sum >= strong {
			lin.authority = min(lin.authority, a)
			return
		}
	}
	lin.authority = min(lin.authority, top)
}

// LineageNode is one record in a lineage view.
type LineageNode struct {
	ID        string    `json:"id"`
	Weight    float64   `json:"weight"`
	Depth     int       `json:"depth"`
	State     State     `json:"state"`
	Authority Authority `json:"authority,omitempty"`
	Channel   string    `json:"channel,omitempty"`
	Namespace string    `json:"namespace,omitempty"`
	Key       string    `json:"key,omitempty"`
	Via       string    `json:"via"` // the id this node was reached from
}

// Lineage is a record with its ancestors and descendants.
type Lineage struct {
	Record      *Record       `json:"record"`
	Ancestors   []LineageNode `json:"ancestors"`
	Descendants []LineageNode `json:"descendants"`
}

// hiddenState marks a lineage node the caller may not see.
const hiddenState State = "hidden"

// MaxLineageNodes bounds a lineage answer.
const MaxLineageNodes = 10000

// Lineage returns a record's ancestors and descendants, breadth first: the
// structure and the states. Reviewers and admins see every record of the
// tenant; anyone else sees the lineage of records in the subject's audience,
// in any state, and other nodes only as hidden ids. Nodes carry no body, and
// the record itself carries its body only where the caller may read it
// (mayRead); otherwise it comes withheld.
func (s *Service) Lineage(ctx context.Context, c *Caller, id string) (*Lineage, error) {
	privileged := c.Principal.HasAny(RoleReviewer, RoleAdmin)
	visible := func(r *Record) bool {
		return privileged || AudienceIncludes(r.Audience, r.Owner, c.Subject.Name, c.Subject.Groups)
	}
	out := &Lineage{}
	err := s.store.View(ctx, func(tx Tx) error {
		root, err := tx.Record(ctx, c.Tenant(), id)
		if errors.Is(err, ErrNotFound) || (err == nil && !visible(root)) {
			return notFound("record")
		}
		if err != nil {
			return err
		}
		out.Record = root
		node := func(r *Record, w float64, depth int, via string) LineageNode {
			if !visible(r) {
				return LineageNode{ID: r.ID, Weight: w, Depth: depth, State: hiddenState, Via: via}
			}
			return LineageNode{ID: r.ID, Weight: w, Depth: depth, State: r.State, Authority: r.Authority,
				Channel: r.Channel, Namespace: r.Namespace, Key: r.Key, Via: via}
		}
		// Ancestors: follow parent edges.
		seen := map[string]bool{root.ID: true}
		type item struct {
			r     *Record
			depth int
		}
		queue := []item{{root, 0}}
		for len(queue) > 0 && len(out.Ancestors) < MaxLineageNodes {
			it := queue[0]
			queue = queue[1:]
			for _, e := range it.r.Parents {
				if seen[e.ID] {
					continue
				}
				seen[e.ID] = true
				p, err := tx.Record(ctx, c.Tenant(), e.ID)
				if err != nil {
					return err
				}
				out.Ancestors = append(out.Ancestors, node(p, e.Weight, it.depth+1, it.r.ID))
				queue = append(queue, item{p, it.depth + 1})
			}
		}
		// Descendants: follow child edges.
		queue = []item{{root, 0}}
		seen = map[string]bool{root.ID: true}
		for len(queue) > 0 && len(out.Descendants) < MaxLineageNodes {
			it := queue[0]
			queue = queue[1:]
			kids, err := tx.Children(ctx, c.Tenant(), it.r.ID)
			if err != nil {
				return err
			}
			for _, kid := range kids {
				if seen[kid] {
					continue
				}
				seen[kid] = true
				k, err := tx.Record(ctx, c.Tenant(), kid)
				if err != nil {
					return err
				}
				out.Descendants = append(out.Descendants, node(k, edgeWeight(k, it.r.ID), it.depth+1, it.r.ID))
				queue = append(queue, item{k, it.depth + 1})
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !privileged && (out.Record.State != StateAdmitted) && out.Record.Owner != c.Subject.Name {
		return nil, notFound("record")
	}
	if !s.mayRead(c, out.Record, s.now()) {
		out.Record.Body, out.Record.Withheld = "", true
	}
	return out, nil
}

func edgeWeight(child *Record, parent string) float64 {
	for _, e := range child.Parents {
		if e.ID == parent {
			return e.Weight
		}
	}
	return 0
}
