package custody

import (
	"slices"
	"strconv"
	"strings"
	"sync"
)

// An admission is a pure function of its input and the policy: Cedar is
// given no entities, only the request AdmissionInput.request builds, and
// the reason is made of the input's fields (the key, which a decision may
// be kept without, is written into its reason again: confirmReason). So a policy keeps the
// decisions it made, by their whole input, and answers the same input
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
	if p.memo == nil || in.Key != "" && p.readsKey {
		return p.admit(in)
	}
	k := in.admitKey(p.readsKey)
	if a, ok := p.memo.get(k); ok {
		a.Rules = slices.Clone(a.Rules)
		a.Inputs = in.inputs()
		if a.State == StatePendingConfirmation {
			a.Reason = confirmReason(in.Key, a.Rules)
		}
		return a
	}
	a := p.admit(in)
	kept := a
	kept.Rules, kept.Inputs = slices.Clone(a.Rules), nil
	p.memo.put(k, kept)
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
