package custody

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"slices"
	"strings"
	"time"
)

// Roles a principal may hold.
const (
	RoleUser        = "user"
	RoleAgent       = "agent"
	RoleReviewer    = "reviewer"
	RolePolicyOwner = "policy_owner"
	RoleAdmin       = "admin"
	// RoleAuditor reads every log entry of its tenant in full (as an admin
	// does), and nothing else more than any principal: it writes nothing,
	// reviews nothing, and retrieves only records in its own audience.
	RoleAuditor = "auditor"
)

// Principal is an authenticated identity in a tenant.
type Principal struct {
	Tenant    string    `json:"tenant"`
	Name      string    `json:"name"`
	Roles     []string  `json:"roles"`
	Channels  []string  `json:"channels"`
	Groups    []string  `json:"groups"`
	PublicKey []byte    `json:"public_key"`
	CreatedAt time.Time `json:"created_at"`

	// What the store keeps beside the rights, read with them so that the
	// server can check the principal against the log (see checkPrincipal):
	// the hash of its token, its sealed signing key, and the index of its
	// latest log entry (NoLogIndex when the row names none).
	TokenHash []byte `json:"-"`
	SealedKey []byte `json:"-"`
	LogIndex  int64  `json:"-"`
}

// ID names the principal across tenants: "tenant/name".
func (p *Principal) ID() string { return p.Tenant + "/" + p.Name }

// Has reports whether p holds role.
func (p *Principal) Has(role string) bool { return slices.Contains(p.Roles, role) }

// HasAny reports whether p holds any of roles.
func (p *Principal) HasAny(roles ...string) bool {
	return slices.ContainsFunc(roles, p.Has)
}

// MayAssert reports whether p was registered with channel c.
func (p *Principal) MayAssert(c string) bool { return slices.Contains(p.Channels, c) }

// ValidRole checks a role name.
func ValidRole(r string) error {
	switch r {
	case RoleUser, RoleAgent, RoleReviewer, RolePolicyOwner, RoleAdmin, RoleAuditor:
		return nil
	}
	return invalid("role", "role %q must be one of user, agent, reviewer, policy_owner, admin, auditor", r)
}

// DefaultChannels are the channels a principal gets for its roles when none
// are given: a user asserts "user", an agent "agent", an admin "admin".
// Least privilege: a user whose own MCP client saves on the agent channel
// is created with --channel user --channel agent.
func DefaultChannels(roles []string) []string {
	var cs []string
	for _, r := range roles {
		switch r {
		case RoleUser:
			cs = append(cs, ChannelUser)
		case RoleAgent:
			cs = append(cs, ChannelAgent)
		case RoleAdmin:
			cs = append(cs, ChannelAdmin)
		}
	}
	return cs
}

const tokenPrefix = "cst_"

// NewToken returns a fresh 256-bit bearer token and the hash to store.
func NewToken() (token string, hash []byte) {
	var b [32]byte
	rand.Read(b[:])
	token = tokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	return token, HashToken(token)
}

// HashToken is what the store keeps of a token.
func HashToken(token string) []byte {
	h := sha256.Sum256([]byte(strings.TrimSpace(token)))
	return h[:]
}
