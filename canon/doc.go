// Package canon holds the canonical forms the action gate compares values
// in: one function per kind of traced value, applied identically to a gate
// call's arguments, to the text the stores index for the gate's lookups, and
// to the memories and observations a value is compared with. A spelling must
// never change a decision, so every form here absorbs the spellings real
// content has:
//
//   - Fold: HTML entities and JSON escapes decoded, Unicode NFKC, case
//     folding, look-alike letters of other scripts mapped to Latin, and
//     every decimal digit set mapped to ASCII digits.
//   - Runs and Match (text and identifiers): the folded text split into
//     runs of letters and digits, so that every space, no-break or
//     zero-width space, format and bidi control, soft hyphen, dash, slash,
//     dot, underscore, line break and other punctuation separates runs, and
//     a value matches when its letters and digits are a sequence of whole
//     consecutive runs: "XK05 1212-0123" and "XK05\u00a01212\u200b0123."
//     both hold the identifier xk0512120123, and "ACCT-77770" does not hold
//     ACCT-7777.
//   - Account: an IBAN or account number as uppercase letters and digits;
//     IBAN reports whether it is one and whether its check digits hold.
//   - Amounts: the numbers a text mentions, canonical ("4900", "9.5"),
//     whatever their notation: thousands and decimal separators of the
//     common locales including Indian grouping, every digit set, k/m/bn
//     suffixes and scale words, and numbers written in English words.
//   - Emails: the e-mail addresses a text mentions, lowercased, including
//     "Name <addr>", mailto: links and the (at)/[at]/" at "/(dot)
//     spellings.
//
// Everything here is a pure function of its input; the package has no
// state and imports nothing of custody's.
package canon
