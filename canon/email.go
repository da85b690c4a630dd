package canon

import (
	"regexp"
	"slices"
	"strings"
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
// an address.
func Emails(text string) []string {
	f := Fold(text)
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
