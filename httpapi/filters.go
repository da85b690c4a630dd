package httpapi

import (
	"net/url"
	"strings"
	"time"

	"github.com/custody-mem/custody"
)

// filterParams are the query parameters of the filters on GET
// /v1/memories; metadata equality filters are metadata.<key>=<value>.
var filterParams = []param{
	{name: "key_prefix", doc: "only keyed records whose key starts with this (payee.: payee.iban, payee.name); not with key"},
	{name: "created_after", doc: "only records created strictly after this RFC 3339 time"},
	{name: "created_before", doc: "only records created strictly before this RFC 3339 time"},
	{name: "metadata.{key}", doc: "only records whose metadata has this key with exactly this value; several are ANDed (metadata.project=apollo&metadata.lang=en)"},
}

// parseTime reads an optional RFC 3339 time.
func parseTime(field, s string) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return nil, badRequest("invalid_input", field, field+" must be an RFC 3339 time such as 2030-01-02T15:04:05Z")
	}
	t = t.UTC()
	return &t, nil
}

// filters builds the domain's filters from their wire form.
func filters(keyPrefix, after, before string, metadata map[string]string) (custody.Filters, error) {
	f := custody.Filters{KeyPrefix: keyPrefix, Metadata: metadata}
	var err error
	if f.CreatedAfter, err = parseTime("created_after", after); err != nil {
		return f, err
	}
	f.CreatedBefore, err = parseTime("created_before", before)
	return f, err
}

// queryFilters reads the filters of a list from its query.
func queryFilters(q url.Values) (custody.Filters, error) {
	var meta map[string]string
	for name, vs := range q {
		k, ok := strings.CutPrefix(name, "metadata.")
		if !ok {
			continue
		}
		if len(vs) != 1 {
			return custody.Filters{}, badRequest("invalid_input", "metadata", "give "+name+" once; metadata filters are equalities, ANDed across keys")
		}
		if meta == nil {
			meta = map[string]string{}
		}
		meta[k] = vs[0]
	}
	return filters(q.Get("key_prefix"), q.Get("created_after"), q.Get("created_before"), meta)
}
