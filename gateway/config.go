package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"time"

	custody "github.com/custody-mem/custody"
)

// Defaults of a Config; the zero value of each field means its default.
const (
	// DefaultTimeout bounds one upstream call, and connecting to an upstream.
	DefaultTimeout = 60 * time.Second
	// DefaultStartTimeout bounds starting an upstream and listing its tools
	// when the gateway starts, unless the call timeout is longer.
	DefaultStartTimeout = 30 * time.Second
	// DefaultMaxResultBytes bounds the size of one upstream result (its
	// content as JSON). It is custody's default body limit, since the
	// result is recorded whole as an observation.
	DefaultMaxResultBytes = custody.DefaultMaxBodyBytes
	// MaxConfigBytes bounds a gateway file.
	MaxConfigBytes = 1 << 20
	// MaxUpstreams bounds how many upstreams one file configures.
	MaxUpstreams = 64
)

// Config is a gateway file:
//
//	{"upstreams": [
//	  {"name": "bank", "channel": "tool:api", "command": ["node", "bank-server.mjs"],
//	   "actions": {"transfer": "send_money"}},
//	  {"name": "files", "channel": "tool:file", "url": "http://127.0.0.1:9000/mcp",
//	   "headers": {"Authorization": "Bearer …"}}
//	]}
type Config struct {
	Upstreams []Upstream `json:"upstreams"`
	// Timeout bounds each upstream call (a Go duration such as "30s").
	// Default DefaultTimeout; an upstream may set its own.
	Timeout Duration `json:"timeout,omitempty"`
	// MaxResultBytes bounds each upstream result. Default
	// DefaultMaxResultBytes; it cannot exceed the store's body limit.
	MaxResultBytes int `json:"max_result_bytes,omitempty"`
}

// Upstream is one MCP server the gateway fronts.
type Upstream struct {
	// Name prefixes its tools (<name>_<tool>) and names its actions
	// (<name>.<tool>): [a-z0-9-]+, at most 32 characters.
	Name string `json:"name"`
	// Channel is the channel its results are observed on, such as
	// tool:api; the principal of the MCP session must be registered with it.
	Channel string `json:"channel"`
	// Command is the command line of a stdio server, started and supervised
	// by the gateway. Exactly one of Command and URL is set.
	Command []string `json:"command,omitempty"`
	// Env adds variables to the environment of Command.
	Env map[string]string `json:"env,omitempty"`
	// Dir is the working directory of Command.
	Dir string `json:"dir,omitempty"`
	// URL is the endpoint of a streamable HTTP server.
	URL string `json:"url,omitempty"`
	// Headers are sent with every request to URL, such as Authorization.
	Headers map[string]string `json:"headers,omitempty"`
	// Actions maps an upstream tool to the policy action it is gated as;
	// a tool it does not name is the action <name>.<tool>.
	Actions map[string]string `json:"actions,omitempty"`
	// Timeout bounds each call to this upstream. Default Config.Timeout.
	Timeout Duration `json:"timeout,omitempty"`
	// ReviewedDescriptions pins the SHA-256 (hex) of what a model reads of
	// this upstream's tools (Gateway.Listing: names, titles, descriptions,
	// schema texts), which the operator has read and vouches for. While the
	// upstream lists exactly that, a session that lists its tools does not
	// count their descriptions as content from outside the user's control;
	// unset, or once the upstream lists anything else, it does (they are an
	// observation on the upstream's channel, which holds the session's
	// writes for review). custody logs the digest at start.
	ReviewedDescriptions string `json:"reviewed_descriptions,omitempty"`
}

// Duration is a time.Duration written in JSON as a Go duration string.
type Duration time.Duration

// UnmarshalJSON reads "30s", "2m" and the like.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New(`a duration is a string such as "30s" or "2m"`)
	}
	v, err := time.ParseDuration(s)
	if err != nil || v <= 0 {
		return fmt.Errorf(`duration %q is not a positive Go duration such as "30s" or "2m"`, s)
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

var (
	sha256Hex   = regexp.MustCompile(`^[0-9a-f]{64}$`)
	validName   = regexp.MustCompile(`^[a-z0-9-]{1,32}$`)
	validHeader = regexp.MustCompile(`^[A-Za-z0-9!#$%&'*+.^_|~-]{1,128}$`)
)

// Load reads and validates a gateway file.
func Load(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("gateway file: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxConfigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("gateway file %s: %w", path, err)
	}
	cfg, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("gateway file %s: %w", path, err)
	}
	return cfg, nil
}

// Parse decodes and validates a gateway file's bytes. Unknown fields are
// errors, so that a misspelt setting is never silently ignored.
func Parse(b []byte) (*Config, error) {
	if len(b) > MaxConfigBytes {
		return nil, fmt.Errorf("larger than %d bytes", MaxConfigBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var cfg Config
	if err := dec.Decode(&cfg); err != nil {
		return nil, fmt.Errorf("not a gateway configuration: %w (expected {\"upstreams\": [{\"name\", \"channel\", \"command\" or \"url\"}, ...]})", err)
	}
	if dec.More() {
		return nil, errors.New("text after the JSON object")
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &cfg, nil
}

func (c *Config) validate() error {
	if len(c.Upstreams) == 0 {
		return errors.New(`no upstreams: list at least one in "upstreams"`)
	}
	if len(c.Upstreams) > MaxUpstreams {
		return fmt.Errorf("%d upstreams; at most %d", len(c.Upstreams), MaxUpstreams)
	}
	if c.MaxResultBytes < 0 || c.MaxResultBytes > custody.DefaultMaxBodyBytes {
		return fmt.Errorf("max_result_bytes %d: give 1 to %d (results are recorded whole as observations)", c.MaxResultBytes, custody.DefaultMaxBodyBytes)
	}
	seen := map[string]bool{}
	for i, u := range c.Upstreams {
		if err := u.validate(); err != nil {
			if u.Name != "" && validName.MatchString(u.Name) {
				return fmt.Errorf("upstream %q: %w", u.Name, err)
			}
			return fmt.Errorf("upstream %d: %w", i+1, err)
		}
		if seen[u.Name] {
			return fmt.Errorf("upstream %q is configured twice; names must be unique", u.Name)
		}
		seen[u.Name] = true
	}
	return nil
}

func (u *Upstream) validate() error {
	if !validName.MatchString(u.Name) {
		return fmt.Errorf("name %q: use 1 to 32 of a-z, 0-9 and - (it prefixes the upstream's tools as <name>_<tool>)", u.Name)
	}
	if u.Channel == "" {
		return errors.New(`no channel: say which channel its results arrive on, such as "tool:api" or "tool:file"`)
	}
	if err := custody.ValidChannel(u.Channel); err != nil {
		return fmt.Errorf("channel: %w", err)
	}
	if custody.ChannelKind(u.Channel) != "tool" {
		return fmt.Errorf("channel %q: an upstream's results are content from outside the user's control; use a tool:<name> channel", u.Channel)
	}
	switch {
	case len(u.Command) > 0 && u.URL != "":
		return errors.New(`both "command" and "url": give one, a stdio command line or a streamable HTTP URL`)
	case len(u.Command) > 0:
		if u.Command[0] == "" {
			return errors.New(`"command" starts with an empty program name`)
		}
		if len(u.Headers) > 0 {
			return errors.New(`"headers" are for a "url" upstream; give a stdio server its settings in "env"`)
		}
	case u.URL != "":
		p, err := url.Parse(u.URL)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return fmt.Errorf("url %q: give an http:// or https:// URL of a streamable HTTP MCP endpoint", u.URL)
		}
		if len(u.Env) > 0 || u.Dir != "" {
			return errors.New(`"env" and "dir" are for a "command" upstream`)
		}
		for k, v := range u.Headers {
			if !validHeader.MatchString(k) {
				return fmt.Errorf("header name %q is not a valid HTTP header name", k)
			}
			for _, r := range v {
				if r == '\r' || r == '\n' || r == 0 {
					return fmt.Errorf("header %s: its value holds a line break or NUL", k)
				}
			}
		}
	default:
		return errors.New(`neither "command" nor "url": give a stdio command line, such as ["npx", "-y", "@modelcontextprotocol/server-filesystem", "/data"], or a streamable HTTP URL`)
	}
	if d := u.ReviewedDescriptions; d != "" && !sha256Hex.MatchString(d) {
		return fmt.Errorf("reviewed_descriptions %q: give the 64 lower-case hex digits custody logs at start as the upstream's descriptions digest", d)
	}
	for tool, action := range u.Actions {
		if tool == "" {
			return errors.New(`"actions" maps an empty tool name`)
		}
		if action == "" || len(action) > 128 {
			return fmt.Errorf("actions: tool %q maps to an action of %d characters; give a policy action name of 1 to 128, such as send_money", tool, len(action))
		}
	}
	return nil
}

// timeout is the bound of one call to u.
func (c *Config) timeout(u *Upstream) time.Duration {
	switch {
	case u.Timeout > 0:
		return time.Duration(u.Timeout)
	case c.Timeout > 0:
		return time.Duration(c.Timeout)
	}
	return DefaultTimeout
}

func (c *Config) maxResult() int {
	if c.MaxResultBytes > 0 {
		return c.MaxResultBytes
	}
	return DefaultMaxResultBytes
}
