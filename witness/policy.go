package witness

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	formats "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"
)

// A Policy is a C2SP tlog-policy (https://c2sp.org/tlog-policy): the
// witnesses whose cosignatures count, and the quorum of them a checkpoint
// must carry to be taken as witnessed. custody serve publishes as current
// only checkpoints that meet the installation's policy; the clients accept
// only those.
//
// The policy's log lines, if any, name the logs it is for (a checkpoint
// must then be signed by one of them); custody's own policy usually has
// none, since it covers every tenant's log of the installation.
type Policy struct {
	// Logs are the verifier keys of the log lines, in order.
	Logs []string
	// Witnesses are the witnesses of the witness lines, in order.
	Witnesses []PolicyWitness
	quorum    *group // nil: quorum none
	groups    map[string]*group
}

// PolicyWitness is one witness line of a policy.
type PolicyWitness struct {
	Name     string // the name the policy gives it
	VKey     string
	URL      string // its submission prefix; "" when the line gives none
	Verifier note.Verifier
}

// group is a quorum rule: at least k of members (witness or group names).
type group struct {
	k       int
	members []string
}

// maxPolicyNames bounds a policy, beyond the 32 logs, witnesses and groups
// tlog-policy asks implementations to support.
const maxPolicyNames = 256

// ParsePolicy parses a C2SP tlog-policy file. Every error names its line.
func ParsePolicy(text []byte) (*Policy, error) {
	p := &Policy{}
	witnesses := map[string]int{} // name → index in p.Witnesses
	groups := map[string]*group{}
	used := map[string]bool{} // names already listed as a member
	keys := map[string]bool{} // public keys (duplicates are refused)
	sawQuorum := false
	for n, line := range strings.Split(string(text), "\n") {
		n++
		if i := strings.IndexFunc(line, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }); i >= 0 {
			return nil, fmt.Errorf("policy line %d: control character %q (only tab and newline are allowed)", n, line[i])
		}
		fields := strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '\t' })
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		bad := func(format string, args ...any) error {
			return fmt.Errorf("policy line %d: "+format, append([]any{n}, args...)...)
		}
		defined := func(name string) bool { _, w := witnesses[name]; _, g := groups[name]; return w || g || name == "none" }
		if len(witnesses)+len(groups)+len(p.Logs) >= maxPolicyNames {
			return nil, bad("more than %d logs, witnesses and groups", maxPolicyNames)
		}
		switch fields[0] {
		case "log":
			if len(fields) < 2 || len(fields) > 3 {
				return nil, bad("want: log <vkey> [<url>]")
			}
			v, err := note.NewVerifier(fields[1])
			if err != nil {
				return nil, bad("log key %q: %v", fields[1], err)
			}
			if err := checkURL(fields[2:]); err != nil {
				return nil, bad("%v", err)
			}
			if k := keyOf(fields[1]); keys[k] {
				return nil, bad("the key of log %s is listed twice", v.Name())
			} else {
				keys[k] = true
			}
			p.Logs = append(p.Logs, fields[1])
		case "witness":
			if len(fields) < 3 || len(fields) > 4 {
				return nil, bad("want: witness <name> <vkey> [<url>]")
			}
			if defined(fields[1]) {
				return nil, bad("the name %q is defined twice", fields[1])
			}
			v, err := NewVerifier(fields[2])
			if err != nil {
				return nil, bad("%v", err)
			}
			if err := checkURL(fields[3:]); err != nil {
				return nil, bad("%v", err)
			}
			if k := keyOf(fields[2]); keys[k] {
				return nil, bad("the key of witness %s is listed twice", fields[1])
			} else {
				keys[k] = true
			}
			w := PolicyWitness{Name: fields[1], VKey: fields[2], Verifier: v}
			if len(fields) == 4 {
				w.URL = strings.TrimSuffix(fields[3], "/")
			}
			witnesses[w.Name] = len(p.Witnesses)
			p.Witnesses = append(p.Witnesses, w)
		case "group":
			if len(fields) < 4 {
				return nil, bad("want: group <name> all|any|<k> <name>...")
			}
			if defined(fields[1]) {
				return nil, bad("the name %q is defined twice", fields[1])
			}
			g := &group{members: fields[3:]}
			for _, m := range g.members {
				switch {
				case m == "none":
					return nil, bad("none cannot be a group member")
				case !defined(m):
					return nil, bad("%q is not defined on a line before", m)
				case used[m]:
					return nil, bad("%q is a member of a group already", m)
				}
				used[m] = true
			}
			switch fields[2] {
			case "all":
				g.k = len(g.members)
			case "any":
				g.k = 1
			default:
				k, err := strconv.Atoi(fields[2])
				if err != nil || k < 1 || k > len(g.members) || strconv.Itoa(k) != fields[2] {
					return nil, bad("threshold %q: want all, any, or a decimal k with 1 <= k <= %d", fields[2], len(g.members))
				}
				g.k = k
			}
			groups[fields[1]] = g
		case "quorum":
			if len(fields) != 2 {
				return nil, bad("want: quorum <name>")
			}
			if sawQuorum {
				return nil, bad("a second quorum line (a policy has exactly one)")
			}
			sawQuorum = true
			switch name := fields[1]; {
			case name == "none":
			case groups[name] != nil:
				p.quorum = groups[name]
			case defined(name):
				p.quorum = &group{k: 1, members: []string{name}}
			default:
				return nil, bad("%q is not defined on a line before", name)
			}
		default:
			return nil, bad("unknown keyword %q (want log, witness, group or quorum)", fields[0])
		}
	}
	if !sawQuorum {
		return nil, errors.New("policy: no quorum line (write quorum <name>, or quorum none)")
	}
	p.groups = groups
	return p, nil
}

// checkURL checks the optional URL field of a line.
func checkURL(rest []string) error {
	if len(rest) == 0 {
		return nil
	}
	u, err := url.Parse(rest[0])
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http(s) URL", rest[0])
	}
	return nil
}

// keyOf is the public key part of a vkey, so that one key under two names
// counts as a duplicate.
func keyOf(vkey string) string {
	if i := strings.LastIndexByte(vkey, '+'); i >= 0 {
		return vkey[i+1:]
	}
	return vkey
}

// None reports whether the policy asks for no cosignature (quorum none):
// every checkpoint meets it.
func (p *Policy) None() bool { return p == nil || p.quorum == nil }

// Pushed is the witnesses of the policy that have a URL: those a server
// sends its checkpoints to.
func (p *Policy) Pushed() []Witness {
	var out []Witness
	for _, w := range p.Witnesses {
		if w.URL != "" {
			out = append(out, Witness{URL: w.URL, VKey: w.VKey, Verifier: w.Verifier})
		}
	}
	return out
}

// Cosigners returns the names of the policy's witnesses with a valid
// cosignature on msg, a signed checkpoint with its cosignature lines,
// made no earlier than notBefore (the zero time: any).
func (p *Policy) Cosigners(msg []byte, notBefore time.Time) map[string]bool {
	out := map[string]bool{}
	text, sigs, ok := bytes.Cut(msg, []byte("\n\n"))
	if !ok {
		return out
	}
	for _, w := range p.Witnesses {
		for _, line := range strings.SplitAfter(string(sigs), "\n") {
			if !strings.HasPrefix(line, "— "+w.Verifier.Name()+" ") {
				continue
			}
			n, err := note.Open([]byte(string(text)+"\n\n"+line), note.VerifierList(w.Verifier))
			if err != nil || len(n.Sigs) != 1 {
				continue
			}
			at, err := formats.CoSigV1Timestamp(n.Sigs[0])
			if err != nil || at.Before(notBefore) {
				continue
			}
			out[w.Name] = true
			break
		}
	}
	return out
}

// Met reports whether msg, a signed checkpoint with its cosignature lines,
// meets the policy with cosignatures made no earlier than notBefore (the
// zero time: any). When it does not, the error says what is missing.
func (p *Policy) Met(msg []byte, notBefore time.Time) error {
	if p.None() {
		return nil
	}
	have := p.Cosigners(msg, notBefore)
	if p.holds(p.quorum, have) {
		return nil
	}
	var names []string
	for _, w := range p.Witnesses {
		if have[w.Name] {
			names = append(names, w.Name)
		}
	}
	fresh := ""
	if !notBefore.IsZero() {
		fresh = " made since " + notBefore.UTC().Format(time.RFC3339)
	}
	if len(names) == 0 {
		return fmt.Errorf("the checkpoint carries no valid cosignature%s of the policy's witnesses; its quorum is %s", fresh, p.describe(p.quorum))
	}
	return fmt.Errorf("the checkpoint's valid cosignatures%s (%s) do not meet the policy's quorum, %s", fresh, strings.Join(names, ", "), p.describe(p.quorum))
}

// holds reports whether the names in have meet g.
func (p *Policy) holds(g *group, have map[string]bool) bool {
	n := 0
	for _, m := range g.members {
		if sub := p.groups[m]; sub != nil {
			if p.holds(sub, have) {
				n++
			}
		} else if have[m] {
			n++
		}
	}
	return n >= g.k
}

// describe spells g for an error message.
func (p *Policy) describe(g *group) string {
	parts := make([]string, len(g.members))
	for i, m := range g.members {
		if sub := p.groups[m]; sub != nil {
			parts[i] = m + " (" + p.describe(sub) + ")"
		} else {
			parts[i] = m
		}
	}
	if len(g.members) == 1 {
		return parts[0]
	}
	return fmt.Sprintf("%d of %s", g.k, strings.Join(parts, ", "))
}
