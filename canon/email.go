package canon

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
)

var (
	emailRE = regexp.MustCompile(`[\p{L}\p{N}._%+\-]+@[\p{L}\p{N}\-]+(?:\.[\p{L}\p{N}\-]+)*\.\p{L}{2,}`)
	// atRE and dotRE are the bracketed spellings of '@' and '.':
	// "(at)", "[at]", "{at}", "<at>", "(@)", and likewise "(dot)".
	atRE  = regexp.MustCompile(`\s*[(\[{<]\s*(?:at|@)\s*[)\]}>]\s*`)
	dotRE = regexp.MustCompile(`\s*[(\[{<]\s*(?:dot|\.)\s*[)\]}>]\s*`)
	// spacedRE is an address with its '@' and dots spelled as words or
	// set apart by spaces: "billing at evil dot example",
	// "bob @ x . example".
	spacedRE    = regexp.MustCompile(`([\p{L}\p{N}._%+\-]+)(?:\s+at\s+|\s*@\s*)([\p{L}\p{N}\-]+(?:(?:\s*\.\s*|\s+dot\s+)[\p{L}\p{N}\-]+)+)`)
	domainSepRE = regexp.MustCompile(`\s*\.\s*|\s+dot\s+`)
)

// Emails lists the e-mail addresses text mentions, folded (lower case):
// plain ones, "Name <addr>", "mailto:addr" (with %40 for '@'), the
// bracketed spellings "(at)", "[at]", "(dot)", "[dot]", and the spelled
// out "name at host dot example". Local parts are compared folded too: a
// mailbox that differs from another only by case is, at every common
// provider, the same mailbox, and a spelling in other case must not hide
// an address. Characters a reader does not see (zero-width spaces and
// joiners, the soft hyphen, bidi controls, variation selectors) are read
// through: "bill\u200bing@x.example" is billing@x.example, as a model
// reading the text takes it.
func Emails(text string) []string {
	f := Fold(text)
	if !plainASCII(f) {
		f = strings.Map(func(r rune) rune {
			if invisible(r) {
				return -1
			}
			return r
		}, f)
	}
	if !strings.Contains(f, "@") && !strings.Contains(f, "at") && !strings.Contains(f, "%40") {
		return nil
	}
	f = strings.ReplaceAll(f, "%40", "@")
	var out []string
	add := func(m string) {
		if m = strings.Trim(m, "."); emailRE.MatchString(m) {
			out = append(out, emailRE.FindString(m))
		}
	}
	for _, m := range emailRE.FindAllString(f, -1) {
		add(m)
	}
	d := dotRE.ReplaceAllString(atRE.ReplaceAllString(f, "@"), ".")
	for _, m := range emailRE.FindAllString(d, -1) {
		add(m)
	}
	for _, m := range spacedRE.FindAllStringSubmatch(d, -1) {
		add(m[1] + "@" + domainSepRE.ReplaceAllString(m[2], "."))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// invisible reports whether r is a character that shows nothing where it
// stands: a format character (zero-width space, joiners, word joiner, soft
// hyphen, bidi controls, byte-order mark), a variation selector or another
// default-ignorable code point of Unicode (the combining grapheme joiner,
// the Hangul fillers).
func invisible(r rune) bool {
	return unicode.In(r, unicode.Cf, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point)
}
