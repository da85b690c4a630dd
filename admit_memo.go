package custody

import (
	"slices"
	"strconv"
	"strings"
	"sync"
)

// An admission is a pure function of its input and the policy: Cedar is
// given no entities, only the request AdmissionInput.request builds, and
// the reason is made of the input's fields. So a policy keeps the
// decisions it made, by their whole input, and answers the same input
// again without evaluating it: a bulk import of like candidates (one
// principal, channel and class, no key) evaluated the same request a
// thousand times a batch, a tenth of its work outside the writer. A
// new policy text is a new Policy, with nothing kept. Keyed candidates
// are not kept: their keys seldom repeat, and they would only crowd out
// those that do.

// admitMemoMax bounds the decisions a policy keeps (a few hundred bytes
// each); past it they are forgotten and made again.
const admitMemoMax = 512

// admitMemo keeps decisions by input (admitKey).
type admitMemo struct {
	mu sync.Mutex
	m  map[string]Admission // without Inputs, which each call makes anew
}

func (m *admitMemo) get(k string) (Admission, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.m[k]
	return a, ok
}

func (m *admitMemo) put(k string, a Admission) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil || len(m.m) >= admitMemoMax {
		m.m = map[string]Admission{}
	}
	m.m[k] = a
}

// Admit evaluates the admission policy (see admit), or answers with the
// decision it made for the same input before. The caller owns what it is
// given.
func (p *Policy) Admit(in AdmissionInput) Admission {
	if p.memo == nil || in.Key != "" {
		return p.admit(in)
	}
	k := in.admitKey()
	if a, ok := p.memo.get(k); ok {
		a.Rules = slices.Clone(a.Rules)
		a.Inputs = in.inputs()
		return a
	}
	a := p.admit(in)
	kept := a
	kept.Rules, kept.Inputs = slices.Clone(a.Rules), nil
	p.memo.put(k, kept)
	return a
}

// admitKey is every field of in that admit reads, each length-prefixed
// (no separator can be forged by a value).
func (in AdmissionInput) admitKey() string {
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
	field(in.Key)
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
