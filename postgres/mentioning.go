package postgres

import (
	"context"
	"strconv"
	"strings"

	custody "github.com/custody-mem/custody"
)

// Mentioning finds the records of the scope's tenant that its subject owns
// or whose audience includes it, in any state, whose gate index text (the
// norm column: custody.RecordGateIndex) contains q.Text, newest first and
// at most q.Limit of them. The text is matched literally (LIKE wildcards
// are escaped) and case-insensitively, as the SQLite trigram index does.
// The audience is tested in the same query, so however many records
// other users write that mention a value, the subject's own are all found.
// The planner reads a long text through the trigram index and a short one
// (no trigram to look up) through the owner and audience indexes.
func (t *txn) Mentioning(ctx context.Context, s custody.Scope, q custody.MentionQuery) ([]*custody.Record, error) {
	if q.Text == "" || !storable(s.Tenant, s.Subject, q.Text) || !storable(s.Groups...) {
		return nil, nil
	}
	groups := make([]string, len(s.Groups))
	for i, g := range s.Groups {
		groups[i] = "group:" + g
	}
	pat := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(strings.ToLower(q.Text))
	query := `SELECT ` + recordCols + ` FROM records r
 WHERE r.norm LIKE '%' || $1 || '%' AND r.tenant = $2
   AND (r.owner = $3 OR r.audience = 'tenant' OR r.audience = ANY($4::text[]))`
	args := []any{pat, s.Tenant, s.Subject, groups}
	if q.InForceFrom > 0 {
		query += ` AND r.state = 'admitted' AND r.authority >= $5`
		args = append(args, int16(q.InForceFrom))
	}
	query += ` ORDER BY r.id DESC`
	if q.Limit > 0 {
		query += ` LIMIT ` + strconv.Itoa(q.Limit)
	}
	return queryRecords(ctx, t.tx, query, args...)
}
