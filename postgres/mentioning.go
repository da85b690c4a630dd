package postgres

import (
	"context"
	"strings"

	custody "github.com/custody-mem/custody"
)

// Mentioning finds the records of the scope's tenant that its subject owns
// or whose audience includes it, in any state, whose normalised body or key
// (the norm column) contains text. text is matched literally (LIKE
// wildcards are escaped) and case-insensitively, as the SQLite trigram
// index does. The audience is tested in the same query and nothing is cut,
// so however many records other users write that mention a value, the
// subject's own are all found. The planner reads a long text through the
// trigram index and a short one (no trigram to look up) through the
// owner and audience indexes.
func (t *txn) Mentioning(ctx context.Context, s custody.Scope, text string) ([]*custody.Record, error) {
	if text == "" || !storable(s.Tenant, s.Subject, text) || !storable(s.Groups...) {
		return nil, nil
	}
	groups := make([]string, len(s.Groups))
	for i, g := range s.Groups {
		groups[i] = "group:" + g
	}
	pat := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(strings.ToLower(text))
	return queryRecords(ctx, t.tx, `SELECT `+recordCols+` FROM records r
 WHERE r.norm LIKE '%' || $1 || '%' AND r.tenant = $2
   AND (r.owner = $3 OR r.audience = 'tenant' OR r.audience = ANY($4::text[]))
 ORDER BY r.id DESC`, pat, s.Tenant, s.Subject, groups)
}
