package custody

import (
	"encoding/json"
	"strings"
)

// Authority is how far a record may be trusted. The order is
// external < agent < user < confirmed.
type Authority int

// The authorities, lowest first. The zero value is not a valid authority.
const (
	AuthorityExternal Authority = iota + 1
	AuthorityAgent
	AuthorityUser
	AuthorityConfirmed
)

var authorityNames = map[Authority]string{
	AuthorityExternal:  "external",
	AuthorityAgent:     "agent",
	AuthorityUser:      "user",
	AuthorityConfirmed: "confirmed",
}

func (a Authority) String() string {
	if s, ok := authorityNames[a]; ok {
		return s
	}
	return "invalid"
}

// ParseAuthority parses an authority name.
func ParseAuthority(s string) (Authority, error) {
	for a, n := range authorityNames {
		if n == s {
			return a, nil
		}
	}
	return 0, invalid("authority", "authority %q must be one of external, agent, user, confirmed", s)
}

// MarshalJSON writes the authority's name.
func (a Authority) MarshalJSON() ([]byte, error) { return json.Marshal(a.String()) }

// UnmarshalJSON reads an authority's name.
func (a *Authority) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := ParseAuthority(s)
	*a = v
	return err
}

// Channels. A channel is asserted by the caller's credential, never by content.
const (
	ChannelUser   = "user"
	ChannelAgent  = "agent"
	ChannelImport = "import"
	ChannelDerive = "derive"
	ChannelAdmin  = "admin"
	toolPrefix    = "tool:"
)

// ValidChannel checks a channel name: user, agent, import, derive, admin or
// tool:<name>.
func ValidChannel(c string) error {
	switch c {
	case ChannelUser, ChannelAgent, ChannelImport, ChannelDerive, ChannelAdmin:
		return nil
	}
	if strings.HasPrefix(c, toolPrefix) && nameRE.MatchString(c[len(toolPrefix):]) {
		return nil
	}
	return invalid("channel", "channel %q must be user, agent, import, derive, admin or tool:<name>", c)
}

// ChannelKind is the channel without its tool name: "tool" for tool:*.
func ChannelKind(c string) string {
	if strings.HasPrefix(c, toolPrefix) {
		return "tool"
	}
	return c
}

// ChannelAuthority is the highest authority content on channel c can carry.
// derive adds no cap of its own: a derived record's authority comes from its
// parents.
func ChannelAuthority(c string) Authority {
	switch ChannelKind(c) {
	case ChannelUser, ChannelAdmin:
		return AuthorityUser
	case ChannelAgent:
		return AuthorityAgent
	case ChannelDerive:
		return AuthorityConfirmed
	}
	return AuthorityExternal
}
