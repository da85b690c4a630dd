package sqlite

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	custody "github.com/custody-mem/custody"
)

// Descendants walks the edges from id a generation at a time, each
// descendant once, reading each with the row its edge names. An edge whose
// row holds another record, or none of the tenant's, fails the walk: a
// cascade must not skip a descendant.
//
// A generation is one query, its parents (a JSON array) joined to their
// edges rather than tested with IN (which would copy them into a temporary
// index), and each edge to its child's row. The query answers in one row,
// its edges joined by spaces: the driver costs more per row than SQLite
// spends reading it, and a cascade reads a row per descendant. Ids are
// ULIDs and states single words, so a space never occurs in a field, and
// an answer that does not split into whole edges fails the walk.
func (t *txn) Descendants(ctx context.Context, tenant, id string) ([]custody.IDState, error) {
	reached := map[string]bool{id: true}
	var out []custody.IDState
	for gen := []string{id}; len(gen) > 0; {
		var n int
		var text string
		err := t.QueryRowContext(ctx, `SELECT count(*), coalesce(group_concat(e.child || ' ' || e.child_rid || ' ' ||
 coalesce(r.state, '-') || ' ' || (r.id IS e.child), ' '), '')
 FROM json_each(?) g CROSS JOIN edges e ON e.parent = g.value
 LEFT JOIN records r ON r.rid = e.child_rid AND r.tenant = e.tenant WHERE e.tenant = ?`, jsonText(gen), tenant).Scan(&n, &text)
		if err != nil {
			return nil, err
		}
		f := strings.Fields(text)
		if len(f) != 4*n {
			return nil, fmt.Errorf("sqlite: the walk from %s read %d fields for %d edges", id, len(f), n)
		}
		var next []string
		for ; len(f) > 0; f = f[4:] {
			rid, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("sqlite: the walk from %s: row %q: %w", id, f[1], err)
			}
			if f[3] != "1" {
				return nil, fmt.Errorf("sqlite: an edge names row %d for %s, a descendant of %s, but the row holds another record or none (run custody verify)", rid, f[0], id)
			}
			if !reached[f[0]] {
				reached[f[0]] = true
				out = append(out, custody.IDState{ID: f[0], State: custody.State(f[2]), Ref: rid})
				next = append(next, f[0])
			}
		}
		gen = next
	}
	slices.SortFunc(out, func(a, b custody.IDState) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// insertEdges writes the edges from r's parents to r, whose row is rid.
func (t *txn) insertEdges(ctx context.Context, rid int64, r *custody.Record) error {
	for _, e := range r.Parents {
		if err := t.exec(ctx, `INSERT INTO edges (tenant, parent, child, weight, child_rid) VALUES (?,?,?,?,?)`, r.Tenant, e.ID, r.ID, e.Weight, rid); err != nil {
			return err
		}
	}
	return nil
}

func (t *txn) Children(ctx context.Context, tenant, id string) ([]string, error) {
	rows, err := t.QueryContext(ctx, `SELECT child FROM edges WHERE parent = ? AND tenant = ? ORDER BY child`, id, tenant)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// SetStates updates by rowid the records that carry one, and by id the
// others. The unary + keeps the planner on the id index: without
// statistics it preferred scanning the tenant, once per batch of a cascade.
func (t *txn) SetStates(ctx context.Context, tenant string, recs []custody.IDState, state custody.State, logIndex uint64, rc *custody.Receipt) error {
	var rids []int64
	var ids []string
	for _, r := range recs {
		if r.Ref != 0 {
			rids = append(rids, r.Ref)
		} else {
			ids = append(ids, r.ID)
		}
	}
	const set = `UPDATE records SET state = ?, log_index = ?, receipt = ? WHERE +tenant = ? AND `
	// Of the rows' fields, only these two are the same on every row.
	receipt := receiptText(rc, &custody.Record{State: state, LogIndex: logIndex}, "dl")
	if len(rids) > 0 {
		if err := t.exec(ctx, set+`rid IN (SELECT value FROM json_each(?))`, string(state), logIndex, receipt, tenant, jsonText(rids)); err != nil {
			return err
		}
	}
	if len(ids) > 0 {
		return t.exec(ctx, set+`id IN (SELECT value FROM json_each(?))`, string(state), logIndex, receipt, tenant, jsonText(ids))
	}
	return nil
}
