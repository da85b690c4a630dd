package custody

import (
	"time"
)

// Filters narrow a list or a search beyond namespace and class. Zero
// fields do not filter. The stores apply them inside the query, with the
// eligibility of every read, before its LIMIT.
type Filters struct {
	// KeyPrefix keeps the keyed records whose key starts with it
	// (bytewise: "payee." keeps payee.iban and payee.name).
	KeyPrefix string
	// CreatedAfter and CreatedBefore keep records created strictly after,
	// and strictly before, these times.
	CreatedAfter, CreatedBefore *time.Time
	// Metadata keeps the records whose metadata holds every one of these
	// keys with exactly this value.
	Metadata Metadata
}

// minFilterTime is the earliest time bound a filter takes (the stores keep
// Unix nanoseconds).
var minFilterTime = time.Date(1678, 1, 1, 0, 0, 0, 0, time.UTC)

// validFilters checks f; key is the exact key filter of a list ("" in a
// search), which a key prefix cannot accompany.
func validFilters(f Filters, key string) error {
	if f.KeyPrefix != "" {
		if key != "" {
			return invalid("key_prefix", "give key or key_prefix, not both")
		}
		if !keyRE.MatchString(f.KeyPrefix) {
			return invalid("key_prefix", "key_prefix %q must match [A-Za-z0-9_.:-]{1,128}, as a key does", f.KeyPrefix)
		}
	}
	for _, t := range []struct {
		field string
		at    *time.Time
	}{{"created_after", f.CreatedAfter}, {"created_before", f.CreatedBefore}} {
		if t.at != nil && (t.at.Before(minFilterTime) || t.at.After(MaxTime)) {
			return invalid(t.field, "%s must be between %s and %s", t.field, minFilterTime.Format(time.RFC3339), MaxTime.Format(time.RFC3339))
		}
	}
	if f.CreatedAfter != nil && f.CreatedBefore != nil && !f.CreatedAfter.Before(*f.CreatedBefore) {
		return invalid("created_before", "created_before (%s) must be later than created_after (%s)",
			f.CreatedBefore.UTC().Format(time.RFC3339Nano), f.CreatedAfter.UTC().Format(time.RFC3339Nano))
	}
	return ValidMetadataFilter(f.Metadata)
}
