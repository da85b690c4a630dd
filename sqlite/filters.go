package sqlite

import (
	"maps"
	"slices"

	custody "github.com/custody-mem/custody"
)

// filterSQL is the condition of f on a record aliased r (" AND ..."), with
// its arguments: appended to every candidate query, beside eligibility.
// Metadata is kept as JSON text (the empty string for none, which json_extract reads as
// NULL through nullif: no match).
func filterSQL(f custody.Filters) (string, []any) {
	var q string
	var args []any
	if f.KeyPrefix != "" {
		q += ` AND r.key != '' AND substr(r.key, 1, ?) = ?`
		args = append(args, len(f.KeyPrefix), f.KeyPrefix)
	}
	if f.CreatedAfter != nil {
		q += ` AND r.created_at > ?`
		args = append(args, f.CreatedAfter.UnixNano())
	}
	if f.CreatedBefore != nil {
		q += ` AND r.created_at < ?`
		args = append(args, f.CreatedBefore.UnixNano())
	}
	for _, k := range slices.Sorted(maps.Keys(f.Metadata)) {
		// Keys are [a-z0-9_.-] (custody.ValidMetadataFilter): quoted, a
		// dot in one is part of the key, not a path step.
		q += ` AND json_extract(nullif(r.metadata, ''), ?) = ?`
		args = append(args, `$."`+k+`"`, f.Metadata[k])
	}
	return q, args
}

// searchFilter is the condition every candidate query of a search shares,
// lexical and semantic alike, on a record aliased r: the eligibility of
// sc (design rule 4) and q's namespace, class and filters, with its
// arguments. It sits inside each query, before its LIMIT.
func searchFilter(sc custody.Scope, q custody.SearchQuery) (string, []any) {
	filter := eligible(len(sc.Groups))
	args := eligibleArgs(sc)
	if q.Namespace != "" {
		filter += ` AND r.namespace = ?`
		args = append(args, q.Namespace)
	}
	if q.NamespacePrefix != "" {
		filter += ` AND ` + underPrefix
		args = append(args, underArgs(q.NamespacePrefix)...)
	}
	if q.Class != "" {
		filter += ` AND r.class = ?`
		args = append(args, string(q.Class))
	}
	fq, fargs := filterSQL(q.Filters)
	return filter + fq, append(args, fargs...)
}
