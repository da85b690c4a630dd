package mcpserver

import (
	"fmt"
	"time"

	custody "github.com/custody-mem/custody"
)

// filters reads memory_search's filters beyond namespace.
func (in SearchInput) filters() (custody.Filters, error) {
	f := custody.Filters{KeyPrefix: in.KeyPrefix, Metadata: in.Metadata}
	for _, t := range []struct {
		name, text string
		at         **time.Time
	}{{"created_after", in.CreatedAfter, &f.CreatedAfter}, {"created_before", in.CreatedBefore, &f.CreatedBefore}} {
		if t.text == "" {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, t.text)
		if err != nil {
			return f, fmt.Errorf("invalid input: %s %q is not an RFC 3339 time such as 2027-01-31T00:00:00Z", t.name, t.text)
		}
		at = at.UTC()
		*t.at = &at
	}
	return f, nil
}
