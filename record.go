package custody

import (
	"regexp"
	"slices"
	"strings"
	"time"
)

// State is where a record stands in its lifecycle. Only StateAdmitted records
// are ever returned by retrieval.
type State string

// The states of a record.
const (
	StateAdmitted            State = "admitted"
	StateQuarantined         State = "quarantined"
	StatePendingConfirmation State = "pending_confirmation"
	StatePending             State = "pending" // admission could not be decided; retryable
	StateRejected            State = "rejected"
	StateRetired             State = "retired"
	StateSuspended           State = "suspended" // an ancestor was quarantined or retired
)

// Terminal reports whether no transition leads out of s except by a new
// admission (a new record).
func (s State) Terminal() bool { return s == StateRejected || s == StateRetired }

// Class is the kind of memory a record holds.
type Class string

// The classes of memory.
const (
	ClassPreference Class = "preference"
	ClassFact       Class = "fact"
	ClassEpisode    Class = "episode"
	ClassProcedure  Class = "procedure"
)

// ParseClass validates a class name.
func ParseClass(s string) (Class, error) {
	switch c := Class(s); c {
	case ClassPreference, ClassFact, ClassEpisode, ClassProcedure:
		return c, nil
	}
	return "", invalid("class", "class %q is not one of preference, fact, episode, procedure", s)
}

// Edge links a derived record to one of its parents. Weight is in [0,1]; an
// edge at or above the strong-edge threshold caps the child's authority.
type Edge struct {
	ID     string  `json:"id"`
	Weight float64 `json:"weight"`
}

// Record is one stored memory with its provenance.
type Record struct {
	ID            string     `json:"id"`
	Tenant        string     `json:"-"`
	Owner         string     `json:"owner"`
	Namespace     string     `json:"namespace"`
	Key           string     `json:"key"`
	Class         Class      `json:"class"`
	Body          string     `json:"body"`
	Channel       string     `json:"channel"`
	Writer        string     `json:"writer"`
	SourceRef     string     `json:"source_ref"`
	Authority     Authority  `json:"authority"`
	Audience      string     `json:"audience"`
	State         State      `json:"state"`
	CreatedAt     time.Time  `json:"created_at"`
	ExpiresAt     *time.Time `json:"expires_at"`
	Version       int        `json:"version"`
	LogIndex      uint64     `json:"log_index"`
	PolicyVersion string     `json:"policy_version"`
	Session       string     `json:"session,omitempty"`
	// Metadata is the write's metadata (metadata.go): plain data, never a
	// control field, erased with the body.
	Metadata Metadata `json:"metadata,omitempty"`
	Parents  []Edge   `json:"parents"`
	Erased   bool     `json:"erased,omitempty"`
	Withheld bool     `json:"withheld,omitempty"` // body left out: not retrievable by the caller
	// SupersededBy, in a history, is the version of the key that replaced
	// this admitted one: its state stays admitted, but it is not in force
	// (only the newest admitted version of a key is), so its body is
	// withheld like any body retrieval would not return.
	SupersededBy int      `json:"superseded_by,omitempty"`
	Receipt      *Receipt `json:"receipt,omitempty"`
	Salt         []byte   `json:"-"` // keys the body's commitment in the log (BodyHash); never shown, erased with the body, empty on records older than salts
}

// Eligible reports whether r may be returned to subject (with the given
// groups) at time now: admitted, unexpired, and in its audience.
func (r *Record) Eligible(subject string, groups []string, now time.Time) bool {
	return r.State == StateAdmitted && !r.Expired(now) && AudienceIncludes(r.Audience, r.Owner, subject, groups)
}

// Expired reports whether r's expiry time has passed.
func (r *Record) Expired(now time.Time) bool {
	return r.ExpiresAt != nil && !now.Before(*r.ExpiresAt)
}

// Receipt is the record of a decision about a record.
type Receipt struct {
	Decision      State             `json:"decision"`
	PolicyVersion string            `json:"policy_version"`
	Rules         []string          `json:"rules"`
	Reason        string            `json:"reason"`
	Inputs        map[string]string `json:"inputs,omitempty"`
	Error         string            `json:"error,omitempty"`
	Actor         string            `json:"actor"`
	Time          time.Time         `json:"time"`
	LogIndex      uint64            `json:"log_index"`
}

// Audience values.
const (
	AudienceOwner  = "owner"
	AudienceTenant = "tenant"
	groupPrefix    = "group:"
)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// ParseAudience validates an audience; the empty string means owner.
func ParseAudience(s string) (string, error) {
	switch {
	case s == "" || s == AudienceOwner:
		return AudienceOwner, nil
	case s == AudienceTenant:
		return s, nil
	case strings.HasPrefix(s, groupPrefix) && nameRE.MatchString(s[len(groupPrefix):]):
		return s, nil
	}
	return "", invalid("audience", "audience %q must be \"owner\", \"tenant\" or \"group:<name>\"", s)
}

// AudienceIncludes reports whether a record with the given audience and owner
// may be seen by subject, a member of groups.
func AudienceIncludes(audience, owner, subject string, groups []string) bool {
	switch {
	case owner == subject:
		return true
	case audience == AudienceTenant:
		return true
	case strings.HasPrefix(audience, groupPrefix):
		return slices.Contains(groups, audience[len(groupPrefix):])
	}
	return false
}

// narrowAudience is the intersection of two audiences of records owned by
// owner. Group audiences intersect to the group when equal and to the owner
// otherwise; tenant is the identity.
func narrowAudience(a, b string) string {
	switch {
	case a == b:
		return a
	case a == AudienceTenant:
		return b
	case b == AudienceTenant:
		return a
	}
	return AudienceOwner
}

var keyRE = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,128}$`)

// ValidNamespace checks the namespace grammar: 1–8 segments joined by "/",
// each [A-Za-z0-9_.-]{1,64}.
func ValidNamespace(ns string) error {
	segs := strings.Split(ns, "/")
	if ns == "" || len(segs) > 8 {
		return invalid("namespace", "namespace %q must be 1 to 8 segments joined by \"/\"", ns)
	}
	for _, s := range segs {
		if !nameRE.MatchString(s) {
			return invalid("namespace", "namespace segment %q must match [A-Za-z0-9_.-]{1,64}", s)
		}
	}
	return nil
}

// ValidKey checks the key grammar [A-Za-z0-9_.:-]{1,128}; the empty key is
// allowed (an unkeyed record).
func ValidKey(k string) error {
	if k != "" && !keyRE.MatchString(k) {
		return invalid("key", "key %q must match [A-Za-z0-9_.:-]{1,128}", k)
	}
	return nil
}

// ValidName checks a tenant, principal or group name.
func ValidName(what, s string) error {
	if !nameRE.MatchString(s) {
		return invalid(what, "%s %q must match [A-Za-z0-9_.-]{1,64}", what, s)
	}
	return nil
}

func fmtTime(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
