package mem0api

import (
	"slices"
	"strings"
)

// Routes lists the method and path, under Prefix, of every Mem0 route
// ({$} left out), in order.
func Routes() [][2]string {
	var out [][2]string
	for pattern := range (&API{}).routes() {
		method, path, _ := strings.Cut(pattern, " ")
		out = append(out, [2]string{method, Prefix + strings.TrimSuffix(path, "{$}")})
	}
	slices.SortFunc(out, func(a, b [2]string) int { return strings.Compare(a[0]+a[1], b[0]+b[1]) })
	return out
}
