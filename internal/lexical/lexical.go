// Package lexical turns text into the terms that custody's search indexes
// hold and its queries look for. Both backends index and query the terms
// this package makes (SQLite through an SQL function feeding FTS5,
// PostgreSQL through a tsvector built here), so they match the same
// records for the same query.
//
// Text is split into tokens: runs of letters and digits, joined by single
// '-', '_', '.', '@' or '+' characters (so "ACCT-7777",
// "bob@example.com" and "payee.iban" are one token each; "ACCT-7777." ends
// at the last digit). A token is an identifier when it contains a digit or
// any joiner other than '-'; otherwise its letter runs are words
// ("follow-up" is the words follow and up).
//
//   - A word is lower-cased; an English stopword ("the", "is", "what", ...)
//     is dropped; a word of ASCII letters is reduced to its English
//     Snowball stem ("replies" and "reply" are both "repli", "running" is
//     "run"). Words with other letters are kept as they are, lower-cased:
//     text in other languages matches word for word, without stemming.
//   - An identifier is kept whole, lower-cased, never stemmed: a search
//     for ACCT-7777 looks for acct-7777 only, so it never matches
//     ACCT-7778. A document also holds each part of its identifiers, as
//     words, so that a search for 7777 or example.com's "example" still
//     finds it.
//
// Text is folded first as the gate folds the values it compares (fold,
// package canon), so a spelling never changes a term: fullwidth letters,
// other digit sets, HTML references and JSON escapes, no-break and
// zero-width spaces, bidi controls and non-breaking hyphens give the
// terms of the plain text.
//
// Terms longer than MaxTermBytes are dropped, from documents and queries
// alike.
package lexical

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
)

// MaxTermBytes is the longest term kept.
const MaxTermBytes = 256

// tokens returns the tokens of text: each a maximal run of letters and
// digits, and the runs it continues to through single joiners, the
// leftmost-longest matches of [\p{L}\p{N}]+(?:[-_.@+][\p{L}\p{N}]+)*.
func tokens(text string) []string {
	var out []string
	for start, end := nextToken(text, 0); start < end; start, end = nextToken(text, end) {
		out = append(out, text[start:end])
	}
	return out
}

// nextToken is the first token of text at or after byte i, text[start:end]
// (start == end == len(text) when there is none). It is scanned by hand: a
// regular expression was most of a document's terms' cost, on the
// writer's goroutine.
func nextToken(text string, i int) (start, end int) {
	for i < len(text) {
		end = runEnd(text, i)
		if end > i {
			break
		}
		_, w := utf8.DecodeRuneInString(text[i:])
		i += w
	}
	if i >= len(text) {
		return len(text), len(text)
	}
	for end < len(text) && isJoiner(text[end]) {
		next := runEnd(text, end+1)
		if next == end+1 {
			break
		}
		end = next
	}
	return i, end
}

// runs returns the maximal runs of letters and digits of tok, the matches
// of [\p{L}\p{N}]+.
func runs(tok string) []string {
	var out []string
	for i := 0; i < len(tok); {
		if end := runEnd(tok, i); end > i {
			out = append(out, tok[i:end])
			i = end
			continue
		}
		_, w := utf8.DecodeRuneInString(tok[i:])
		i += w
	}
	return out
}

// runEnd is the end of the run of letters and digits starting at i (i
// itself when there is none).
func runEnd(s string, i int) int {
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
				return i
			}
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsLetter(r) && !unicode.IsNumber(r) {
			return i
		}
		i += w
	}
	return i
}

func isJoiner(c byte) bool {
	return c == '-' || c == '_' || c == '.' || c == '@' || c == '+'
}

// Document returns the terms of text as an index holds them, in order,
// with the parts of each identifier after it; of a JSON object or array,
// the terms of its values (Values).
func Document(text string) []string {
	var out []string
	for _, tok := range tokens(fold(Values(text))) {
		if isIdentifier(tok) {
			out = keep(out, tok)
			if rs := runs(tok); len(rs) > 1 {
				for _, r := range rs {
					out = keepWord(out, r)
				}
			}
			continue
		}
		for _, r := range runs(tok) {
			out = keepWord(out, r)
		}
	}
	return out
}

// Query returns the distinct terms of a plain-text query, at most n of
// them (n < 0: all), in order. Identifiers are whole terms, never their
// parts. A query of stopwords only has no terms.
func Query(text string, n int) []string {
	var out []string
	seen := map[string]bool{}
	add := func(t string) {
		if t != "" && !seen[t] && len(t) <= MaxTermBytes && (n < 0 || len(out) < n) {
			seen[t] = true
			out = append(out, t)
		}
	}
	for _, tok := range tokens(fold(text)) {
		if isIdentifier(tok) {
			add(tok)
			continue
		}
		for _, r := range runs(tok) {
			add(word(r))
		}
	}
	return out
}

// IsIdentifier reports whether a lower-case form EachWord gives is an
// identifier kept whole (acct-7777, bob@example.com, 2023), not a word.
func IsIdentifier(form string) bool { return isIdentifier(form) }

// isIdentifier reports whether a lower-case token is kept whole: it holds
// a digit or a joiner other than '-'.
func isIdentifier(tok string) bool {
	return strings.ContainsFunc(tok, func(r rune) bool {
		return unicode.IsNumber(r) || strings.ContainsRune("_.@+", r)
	})
}

// word is the term of one lower-case run of letters or digits: "" for a
// stopword, the English stem for ASCII letters, else the run itself.
func word(r string) string {
	for i := 0; i < len(r); i++ {
		if c := r[i]; c < 'a' || c > 'z' {
			if english.IsStopWord(r) {
				return ""
			}
			return r
		}
	}
	return stems.of(r)
}

// stemCache keeps the terms of the ASCII words seen lately: stemming a
// word is most of a document's cost, and text repeats its words. It holds
// at most maxStems words, and starts again empty when full.
type stemCache struct {
	mu sync.Mutex
	m  map[string]string
}

const maxStems = 1 << 15

var stems stemCache

// of is the term of an ASCII lower-case word: "" for a stopword, else its
// stem.
func (c *stemCache) of(w string) string {
	c.mu.Lock()
	t, ok := c.m[w]
	c.mu.Unlock()
	if ok {
		return t
	}
	if !english.IsStopWord(w) {
		t = english.Stem(w, false)
	}
	w, t = strings.Clone(w), strings.Clone(t) // they may point into a large text
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxStems {
		c.m = make(map[string]string, 1024)
	}
	c.m[w] = t
	c.mu.Unlock()
	return t
}

func keepWord(out []string, r string) []string { return keep(out, word(r)) }

func keep(out []string, t string) []string {
	if t == "" || len(t) > MaxTermBytes {
		return out
	}
	return append(out, t)
}

// Word is one query term of a text and the lower-cased form it was
// written in, which a query can carry to look for that term again
// (Query(Form, 1) is Term).
type Word struct {
	Term, Form string
}

// Words returns the query terms of text with their forms, in order and
// with repeats (a term counts as often as it is written): the words a
// query would look for, identifiers whole; of a JSON object or array,
// those of its values (Values), never its keys.
func Words(text string) []Word {
	var out []Word
	add := func(t, form string) {
		if t != "" && len(t) <= MaxTermBytes {
			out = append(out, Word{t, form})
		}
	}
	for _, tok := range tokens(fold(Values(text))) {
		if isIdentifier(tok) {
			add(tok, tok)
			continue
		}
		for _, r := range runs(tok) {
			add(word(r), r)
		}
	}
	return out
}

// Term is the term of one lower-case token of Query's: an identifier
// whole, a run of letters or digits as Query makes it (its stem; "" for a
// stopword). It allocates nothing for a word seen lately.
func Term(tok string) string {
	if isIdentifier(tok) {
		if len(tok) > MaxTermBytes {
			return ""
		}
		return tok
	}
	if t := word(tok); len(t) <= MaxTermBytes {
		return t
	}
	return ""
}

// EachWord calls fn with the lower-case words of text as the search index
// reads them (of a body, the caller passes Values): tokens are runs
// of letters and digits joined by single '-', '_', '.', '@' or '+'; a
// token holding a digit or a joiner other than '-' is an identifier, one
// word whole (followed, with parts, by each of its runs, as a document's
// terms are: ACCT-7777 is acct-7777, acct and 7777), and any other token
// is one word per run ("follow-up" is follow and up).
func EachWord(text string, parts bool, fn func(form string)) {
	text = fold(text)
	for start, end := nextToken(text, 0); start < end; start, end = nextToken(text, end) {
		tok := text[start:end]
		if isIdentifier(tok) {
			fn(tok)
			if !parts {
				continue
			}
		}
		for j := 0; j < len(tok); {
			e := runEnd(tok, j)
			if e == j {
				j++ // a joiner
				continue
			}
			fn(tok[j:e])
			j = e
		}
	}
}
