package main

import (
	"flag"
	"fmt"
	"strings"
	"time"
)

// filterFlags are the filters recall and search share beyond namespace
// and class.
type filterFlags struct {
	keyPrefix, after, before string
	metadata                 multiFlag
}

func (f *filterFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.keyPrefix, "key-prefix", "", "only keyed records whose key starts with this `prefix` (payee.: payee.iban, payee.name)")
	fs.StringVar(&f.after, "created-after", "", "only records created strictly after this `time`, RFC 3339")
	fs.StringVar(&f.before, "created-before", "", "only records created strictly before this `time`, RFC 3339")
	fs.Var(&f.metadata, "metadata", "only records whose metadata has `KEY=VALUE` (repeat: all must hold)")
}

// metadataMap reads repeated KEY=VALUE flags; nil for none.
func metadataMap(flagName string, kvs []string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, usageError{fmt.Sprintf("--%s %q must be KEY=VALUE, such as project=apollo", flagName, kv)}
		}
		if _, dup := m[k]; dup {
			return nil, usageError{fmt.Sprintf("--%s gives %s twice", flagName, k)}
		}
		m[k] = v
	}
	return m, nil
}

// rfc3339 is an optional time as the API takes it ("" for none).
func rfc3339(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
