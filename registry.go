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

func (r *registry) add(tenant, id string, st State, erased bool) error {
	line := fmt.Sprintf("%s %s %s", tenant, id, st)
	if erased {
		line += " " + erasedMark
	}
	return r.addLine(line)
}

// addLine appends line to the registry and syncs it.
func (r *registry) addLine(line string) error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	f, err := os.OpenFile(r.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("retired-id registry: %w", err)
	}
	if _, err := fmt.Fprintln(f, line); err != nil {
		f.Close()
		return fmt.Errorf("retired-id registry: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("retired-id registry: %w", err)
	}
	return f.Close()
}

// erasedMark ends the line of an id whose body was erased: a restore of a
// snapshot taken before the erasure restores the record without its body.
const erasedMark = "erased"

// revokedMark is the third field of the line of a revoked principal,
// "tenant name principal-revoked": a restore of a snapshot taken before
// the revocation restores the principal revoked.
const revokedMark = "principal-revoked"

// addRevoked registers a revoked principal.
func (r *registry) addRevoked(tenant, name string) error {
	return r.addLine(tenant + " " + name + " " + revokedMark)
}

// revoked reads the registered revoked principals (tenant/name).
func (r *registry) revoked() (map[string]bool, error) {
	if r == nil {
		return map[string]bool{}, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]bool{}
	b, err := os.ReadFile(r.path)
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("retired-id registry: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[2] == revokedMark {
			out[f[0]+"/"+f[1]] = true
		}
	}
	return out, nil
}

// load reads the registry: tenant+"\x00"+id → state. A missing file is an
// empty registry.
func (r *registry) load() (map[string]State, error) {
	states, _, err := r.read()
	return states, err
}

// erased reads the ids of the registry whose bodies were erased
// (tenant+"\x00"+id).
func (r *registry) erased() (map[string]bool, error) {
	_, erased, err := r.read()
	return erased, err
}

func (r *registry) read() (map[string]State, map[string]bool, error) {
	out, erased := map[string]State{}, map[string]bool{}
	if r == nil {
		return out, erased, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	f, err := os.Open(r.path)
	if errors.Is(err, os.ErrNotExist) {
		return out, erased, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("retired-id registry: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 3 && fields[2] == revokedMark {
			continue // a revoked principal (revoked)
		}
		if (len(fields) != 3 && (len(fields) != 4 || fields[3] != erasedMark)) || !State(fields[2]).Terminal() {
			return nil, nil, fmt.Errorf("retired-id registry %s line %d is malformed; restore the file from a backup", r.path, n)
		}
		k := fields[0] + "\x00" + fields[1]
		out[k] = State(fields[2])
		if len(fields) == 4 {
			erased[k] = true
		}
	}
	return out, erased, sc.Err()
}
