package postgres

import (
	"hash/maphash"
	"sync/atomic"

	"github.com/custody-mem/custody/embed"
	"github.com/custody-mem/custody/internal/postings"
)

// The forms kept beside a tenant's copy.
//
// The semantic list of a static embedder (glove) scores 400 candidates a
// search, each by the form the scorer derives from its key and body
// (embed.Form): at 100k records, deriving them was a third of a hybrid
// search's CPU, and their texts most of what the eligibility query sent
// back. So each tenant's copy keeps, by row, the form a scorer derived of
// a record's text, in one array of bytes with no pointer in it; the
// eligibility query of a candidate whose form is kept asks for its id
// alone, and the scorer is given the form (custody.CandidateText.Partial).
//
// A form is kept only while it stands for the text the copy holds of its
// record: with the sum of the text it was derived from (textSum), equal
// to the copy's when it is kept. When the copy learns that a record's
// text changed (an erasure, replaceLocked), its form's bytes are zeroed
// and forgotten; when the copy is dropped, its forms go with it. The copy
// never decides who sees a record, and neither do its forms: every
// candidate is still checked by PostgreSQL, with the eligibility
// condition, before it is scored. The forms of every tenant share one
// bound (formsBytes): a tenant's forms that would pass it are dropped,
// and kept again as its searches derive them.

// formsBytes bounds the forms kept over all tenants (a form is about 60
// bytes a conversation turn), or a quarter of the copies' bound if that
// is less.
const formsBytes = 32 << 20

// formRef is where a row's form is in its copy's forms; n 0 for none.
type formRef struct{ off, n uint32 }

// copyForms are a tenant copy's kept forms, under its lock.
type copyForms struct {
	// total counts the bytes of every tenant's forms (searchCopies.forms;
	// set by searchCopies.tenant, which makes every copy that keeps any).
	total *atomic.Int64

	b  []byte
	at []formRef // by row
}

// form appends row's kept form to dst, if the copy keeps one for it and
// row is still id's; the form is dst's tail (nil if none).
func (tc *tenantCopy) form(row uint32, id string, dst []byte) ([]byte, embed.Form) {
	if int(row) >= len(tc.forms.at) || int(row) >= len(tc.ids) || tc.ids[row] != id {
		return dst, nil
	}
	r := tc.forms.at[row]
	if r.n == 0 {
		return dst, nil
	}
	start := len(dst)
	dst = append(dst, tc.forms.b[r.off:r.off+r.n]...)
	return dst, embed.Form(dst[start:len(dst):len(dst)])
}

// formsOf is the kept form of each of best (rows of the copy ranked for
// ids), copied out under the copy's lock: nil where none is kept.
func (tc *tenantCopy) formsOf(best []postings.Hit, ids []string) []embed.Form {
	out := make([]embed.Form, len(best))
	var buf []byte
	tc.mu.RLock()
	defer tc.mu.RUnlock()
	for i, h := range best {
		var f embed.Form
		if buf, f = tc.form(h.Row, ids[i], buf); f != nil {
			out[i] = f
		}
	}
	return out
}

// derivedForm is a form a scorer derived of the text of a record the
// copy ranked at row, with the sum of that text.
type derivedForm struct {
	row  uint32
	id   string
	sum  uint64
	form []byte
}

// keepForms keeps forms, each where its row is still its record's and
// the copy holds the text it was derived from; a kept form of the row is
// replaced. limit bounds the bytes of every tenant's forms: past it, this
// copy's forms are dropped first.
func (tc *tenantCopy) keepForms(forms []derivedForm, limit int64) {
	if len(forms) == 0 || limit <= 0 {
		return
	}
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if tc.x == nil {
		return
	}
	for _, f := range forms {
		if int(f.row) >= len(tc.ids) || tc.ids[f.row] != f.id || tc.sums[f.row] != f.sum || len(f.form) == 0 {
			continue
		}
		if tc.forms.total.Load()+int64(len(f.form)) > limit {
			tc.dropFormsLocked()
			if tc.forms.total.Load()+int64(len(f.form)) > limit { // other tenants' forms hold the bound
				continue
			}
		}
		tc.forgetFormLocked(f.row)
		for len(tc.forms.at) <= int(f.row) {
			tc.forms.at = append(tc.forms.at, formRef{})
		}
		before := cap(tc.forms.b)
		tc.forms.at[f.row] = formRef{off: uint32(len(tc.forms.b)), n: uint32(len(f.form))}
		tc.forms.b = append(tc.forms.b, f.form...)
		tc.forms.total.Add(int64(cap(tc.forms.b) - before))
	}
}

// forgetFormLocked zeroes and forgets row's kept form (its record's text
// changed: an erasure).
func (tc *tenantCopy) forgetFormLocked(row uint32) {
	if int(row) >= len(tc.forms.at) {
		return
	}
	r := tc.forms.at[row]
	clear(tc.forms.b[r.off : r.off+r.n])
	tc.forms.at[row] = formRef{}
}

// dropFormsLocked drops every form of the copy.
func (tc *tenantCopy) dropFormsLocked() {
	if cap(tc.forms.b) > 0 {
		tc.forms.total.Add(-int64(cap(tc.forms.b)))
	}
	tc.forms = copyForms{total: tc.forms.total}
}

// textSumOf is textSum of a record whose body and key are these.
func textSumOf(seed maphash.Seed, body, key string) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	h.WriteString(body)
	h.WriteByte(0)
	h.WriteString(key)
	return h.Sum64()
}

// formsLimit is the bound of the tenants' kept forms: formsBytes, or a
// quarter of the copies' bound if that is less.
func (c *searchCopies) formsLimit() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return min(formsBytes, c.limit/4)
}
