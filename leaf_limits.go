package custody

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/custody-mem/custody/tlog"
)

// Every log leaf must fit a C2SP entry bundle, which gives each entry's
// length in two bytes: a longer leaf is in the tree, but no tlog-tiles
// reader (custody's tiles, torchwood, Tessera's fsck) can read the bundle
// that holds it, or the log past it. So the text a caller gives that goes
// into an entry is bounded where it comes in (a reason at MaxReasonBytes,
// a record's source_ref at 2048 bytes, a body only by its salted hash),
// what the server writes there itself is clipped (an admission error at
// MaxErrorBytes), and appendSigned refuses, as invalid input naming the
// largest field, any entry whose leaf would still pass MaxLeafBytes: the
// request fails with 400 and nothing of it is written.

// MaxLeafBytes is the largest log leaf custody appends.
const MaxLeafBytes = 0xFFFF

// MaxReasonBytes bounds the reason a caller gives a transition (delete,
// erase, retire, quarantine, approve, reject, pause, principal changes):
// it is kept in the receipt and the log entry.
const MaxReasonBytes = 4096

// MaxErrorBytes bounds the error a receipt keeps (a policy that could
// not be loaded): longer text is cut at a character boundary.
const MaxErrorBytes = 2048

// validReason checks a caller's reason: UTF-8 text of at most
// MaxReasonBytes.
func validReason(reason string) error {
	if len(reason) > MaxReasonBytes {
		return invalid("reason", "reason is %d bytes; the limit is %d (it is kept in the log, whose entries hold at most %d bytes): shorten it", len(reason), MaxReasonBytes, MaxLeafBytes)
	}
	return validText("reason", reason, false)
}

// clip cuts s to at most n bytes at a character boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// requestField names, for the details of an entry, the request field a
// caller fills them from: what an oversize entry's error points at.
var requestField = map[string]string{
	"reason": "reason", "source_ref": "source_ref", "parents": "derived_from",
	"justification": "justification", "action": "action",
}

// fieldOf is the request field behind part, the largest part of an
// oversize entry e: a gate's reasons quote the justification's ids and the
// arguments, so they point at the justification when it makes most of
// them and at the arguments otherwise.
func fieldOf(e *tlog.Entry, part string) string {
	k, ok := strings.CutPrefix(part, "details.")
	switch {
	case !ok:
		return ""
	case k == "reasons" && 2*len(e.Details["justification"]) >= len(e.Details["reasons"]):
		return "justification"
	case k == "reasons":
		return "args"
	}
	return requestField[k]
}

// checkLeaf refuses the leaf of e when it is longer than MaxLeafBytes,
// naming the largest field of e.
func checkLeaf(e *tlog.Entry, leaf []byte) error {
	if len(leaf) <= MaxLeafBytes {
		return nil
	}
	part, size := "record_ids", 0
	for _, id := range e.RecordIDs {
		size += len(id)
	}
	for _, k := range slices.Sorted(mapKeys(e.Details)) {
		if n := len(e.Details[k]); n > size {
			part, size = "details."+k, n
		}
	}
	field := fieldOf(e, part)
	fix := "shorten it"
	if field != "" {
		fix = "which comes from the request's " + field + ": shorten that"
	}
	return &Error{Kind: ErrInvalid, Field: field, Msg: fmt.Sprintf(
		"the log entry of this %s would be %d bytes, more than the %d a log entry may hold (a C2SP entry bundle's limit); its largest part is %s (%d bytes), %s. Nothing was written",
		e.Transition, len(leaf), MaxLeafBytes, part, size, fix)}
}
