package lexical

import (
	"strings"
	"unicode"

	"github.com/custody-mem/custody/canon"
)

// fold is the text tokens are read from, as the gate reads values
// (package canon): HTML character references and JSON escapes decoded,
// Unicode NFKC (fullwidth letters and digits, ligatures, no-break
// spaces), case folded, look-alike letters of other scripts read as
// Latin, every decimal digit set read as ASCII digits (canon.Fold); then
// the format characters dropped (zero-width spaces and joiners, bidi
// controls, soft hyphens: invisible, they split no word and no
// identifier), and the hyphens U+2010 and U+2011 read as '-'. So
// "ＡＣＣＴ－７７７７", "ACCT-٧٧٧٧", "ACCT‑7777" and "ACCT-77\u200b77" are
// all the identifier acct-7777. Plain ASCII text is only lower-cased.
func fold(text string) string {
	text = canon.Fold(text)
	if !strings.ContainsFunc(text, needsMore) {
		return text
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\u2010' || r == '\u2011':
			return '-'
		case unicode.Is(unicode.Cf, r):
			return -1
		}
		return r
	}, text)
}

func needsMore(r rune) bool {
	return r == '\u2010' || r == '\u2011' || r >= 0x80 && unicode.Is(unicode.Cf, r)
}
