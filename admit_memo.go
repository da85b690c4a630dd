package custody

import (
	"slices"
	"strconv"
	"strings"
	"sync"
)

// An admission is a pure function of its input and the policy: Cedar is
// given no entities, only the request AdmissionInput.request builds, and
// the reason and the receipt's inputs are written from the input at hand
// (explain, inputs), so a decision is kept without them. So a policy keeps
// the decisions it made, by their whole input, and answers the same input
// again without evaluating it: a bulk import of like candidates (one
// principal, channel and class, no key) evaluated the same request a
// thousand times a batch, a tenth of its work outside the writer. A
// new policy text is a new Policy, with nothing kept. A record's key
// seldom repeats: where a policy reads it (context.key, policy_reads.go),
// keyed candidates are not kept, as they would only crowd out the inputs
// that do repeat; where none does, as in the default policy, the key is
// left out of what a decision is kept by, and a keyed write of a known
// kind is answered from the memo too.

// admitMemoMax bounds the decisions a policy keeps (a few hundred bytes
// each); past it they are forgotten and made again.
const admitMemoMax = 512

// admitMemo keeps decisions by input (admitKey).
type admitMemo struct {
	mu sync.Mutex
	m  map[string]keptDecision
}

// keptDecision is a decision as decide made it (state, rules, error) and
// its outcome, from which each answer's reason is written.
type keptDecision struct {
	a    Admission
	kind reasonKind
}

func (m *admitMemo) get(k string) (keptDecision, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.m[k]
	return d, ok
}

func (m *admitMemo) put(k string, d keptDecision) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil || len(m.m) >= admitMemoMax {
		m.m = map[string]keptDecision{}
	}
	m.m[k] = d
}

// Admit evaluates the admission policy (see admit), or answers with the
// decision it made for the same input before. The caller owns what it is
// given.
func (p *Policy) Admit(in AdmissionInput) Admission {
	if p.memo == nil || in.Key != "" && p.readsKey {
		return p.admit(in)
	}
	k := in.admitKey(p.readsKey)
	d, ok := p.memo.get(k)
	if !ok {
		d.a, d.kind = p.decide(in)
		kept := d
		kept.a.Rules = slices.Clone(d.a.Rules)
		p.memo.put(k, kept)
	}
	a := d.a
	a.Rules = slices.Clone(a.Rules)
	a.Inputs, a.Reason = in.inputs(), explain(d.kind, a.Rules, in)
	return a
}

// admitKey is every field of in that admit reads, each length-prefixed
// (no separator can be forged by a value); the record's key only when
// withKey says the policy reads it.
func (in AdmissionInput) admitKey(withKey bool) string {
	var b strings.Builder
	field := func(s string) {
		b.WriteString(strconv.Itoa(len(s)))
		b.WriteByte(':')
		b.WriteString(s)
	}
	field(in.Principal.ID())
	b.WriteString(strconv.Itoa(len(in.Principal.Roles)))
	for _, r := range in.Principal.Roles {
		field(r)
	}
	field(in.Channel)
	field(string(in.Class))
	if withKey {
		field(in.Key)
	}
	b.WriteString(strconv.Itoa(int(in.Authority)))
	field(in.Audience)
	for _, f := range []bool{in.Overwrite, in.Sensitive, in.HasSession, in.Derived} {
		b.WriteString(strconv.FormatBool(f))
	}
	keys := make([]string, 0, len(in.Metadata))
	for k := range in.Metadata {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b.WriteString(strconv.Itoa(len(keys)))
	for _, k := range keys {
		field(k)
		field(in.Metadata[k])
	}
	return b.String()
}
