package custody

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
)

// registry is the retired-and-rejected id registry kept outside the
// database, beside the server key: one "tenant id state" line per id,
// appended and synced before the transaction that retires or rejects the id
// commits. A snapshot must be signed by the same server key to be restored,
// so a restore — even into a brand-new database — consults the registry of
// that key and never revives an id it lists (design rule 10). An id listed
// whose transaction then failed to commit is harmless: ids are never reused.
type registry struct {
	path string
	mu   sync.Mutex
}

func (r *registry) add(tenant, id string, st State) error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	f, err := os.OpenFile(r.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("retired-id registry: %w", err)
	}
	if _, err := fmt.Fprintf(f, "%s %s %s\n", tenant, id, st); err != nil {
		f.Close()
		return fmt.Errorf("retired-id registry: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("retired-id registry: %w", err)
	}
	return f.Close()
}

// load reads the registry: tenant+"\x00"+id → state. A missing file is an
// empty registry.
func (r *registry) load() (map[string]State, error) {
	out := map[string]State{}
	if r == nil {
		return out, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	f, err := os.Open(r.path)
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("retired-id registry: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) != 3 || !State(fields[2]).Terminal() {
			return nil, fmt.Errorf("retired-id registry %s line %d is malformed; restore the file from a backup", r.path, n)
		}
		out[fields[0]+"\x00"+fields[1]] = State(fields[2])
	}
	return out, sc.Err()
}
