package custody

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base32"
	"strings"
	"sync"

	"github.com/custody-mem/custody/tlog"
	"golang.org/x/time/rate"
)

// Log IDs: where each tenant's log is published.
//
// A tenant's log is served to anyone as C2SP tlog-tiles (checkpoint and
// hash tiles hold only hashes), but under /log/<ID>/ rather than under
// the tenant's name, so that publishing the logs never publishes the list
// of tenants or lets a stranger watch one grow: the ID is an HMAC of the
// installation's log name and the tenant under a key derived from the
// server key, 26 base32 characters that cannot be guessed from the
// tenant's name. It is stable for the life of the log (servers sharing a
// store and its key agree on it; a restore into another store, with
// another log name, gives the new log another one), and is handed out by
// custody log list and GET /v1/log/status to those who should follow the
// log. An unknown ID and a tenant without a log answer alike.

// LogIDLen is the length of a log ID.
const LogIDLen = 26

// listRate and listBurst bound how often LogIDs.Tenant lists the store's
// logs again for IDs it does not know (per second, and at once), so that
// requests for made-up IDs cost a lookup in memory, not a query each.
const (
	listRate  = 10
	listBurst = 10
)

var logIDEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// LogIDs maps tenants to the IDs their logs are published under and back.
// It is safe for concurrent use.
type LogIDs struct {
	key  []byte
	name string
	logs LogReader

	mu    sync.Mutex
	byID  map[string]string
	lists *rate.Limiter
}

// LogIDs returns the log IDs of the service's installation.
func (s *Service) LogIDs() *LogIDs {
	return &LogIDs{key: logIDKeyOf(s.key), name: s.opts.LogOrigin, logs: s.store, byID: map[string]string{}, lists: rate.NewLimiter(listRate, listBurst)}
}

// logIDKeyOf derives the log ID key from the server key.
func logIDKeyOf(key *tlog.ServerKey) []byte {
	if key == nil {
		return nil
	}
	d := sha256.Sum256(append([]byte("custody log id key\x00"), key.SigningKey().Seed()...))
	return d[:]
}

// ID is the ID tenant's log is published under.
func (l *LogIDs) ID(tenant string) string {
	m := hmac.New(sha256.New, l.key)
	m.Write([]byte(l.name + "\x00" + tenant))
	return strings.ToLower(logIDEncoding.EncodeToString(m.Sum(nil)[:16]))
}

// Tenant returns the tenant whose log is published under id; false when
// no tenant's log is (a malformed ID, an unknown one, a tenant without a
// log). An ID not known yet lists the store's logs again (at most
// listRate times a second: past it, an unknown ID is not found until the
// next listing).
func (l *LogIDs) Tenant(ctx context.Context, id string) (string, bool, error) {
	if !ValidLogID(id) {
		return "", false, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if t, ok := l.byID[id]; ok {
		return t, true, nil
	}
	if !l.lists.Allow() {
		return "", false, nil
	}
	tenants, err := l.logs.LogTenants(ctx)
	if err != nil {
		return "", false, err
	}
	for _, t := range tenants {
		l.byID[l.ID(t)] = t
	}
	t, ok := l.byID[id]
	return t, ok, nil
}

// ValidLogID reports whether id is spelled as a log ID.
func ValidLogID(id string) bool {
	if len(id) != LogIDLen {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}
