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
// Terms longer than MaxTermBytes are dropped, from documents and queries
// alike.
package lexical

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/kljensen/snowball/english"
)

// MaxTermBytes is the longest term kept.
const MaxTermBytes = 256

var (
	tokenRE = regexp.MustCompile(`[\p{L}\p{N}]+(?:[-_.@+][\p{L}\p{N}]+)*`)
	runRE   = regexp.MustCompile(`[\p{L}\p{N}]+`)
)

// Document returns the terms of text as an index holds them, in order,
// with the parts of each identifier after it.
func Document(text string) []string {
	var out []string
	for _, tok := range tokenRE.FindAllString(text, -1) {
		tok = strings.ToLower(tok)
		if isIdentifier(tok) {
			out = keep(out, tok)
			if runs := runRE.FindAllString(tok, -1); len(runs) > 1 {
				for _, r := range runs {
					out = keepWord(out, r)
				}
			}
			continue
		}
		for _, r := range runRE.FindAllString(tok, -1) {
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
	for _, tok := range tokenRE.FindAllString(text, -1) {
		tok = strings.ToLower(tok)
		if isIdentifier(tok) {
			add(tok)
			continue
		}
		for _, r := range runRE.FindAllString(tok, -1) {
			add(word(r))
		}
	}
	return out
}

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
	if english.IsStopWord(r) {
		return ""
	}
	for i := 0; i < len(r); i++ {
		if c := r[i]; c < 'a' || c > 'z' {
			return r
		}
	}
	return english.Stem(r, false)
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
// query would look for, identifiers whole.
func Words(text string) []Word {
	var out []Word
	add := func(t, form string) {
		if t != "" && len(t) <= MaxTermBytes {
			out = append(out, Word{t, form})
		}
	}
	for _, tok := range tokenRE.FindAllString(text, -1) {
		tok = strings.ToLower(tok)
		if isIdentifier(tok) {
			add(tok, tok)
			continue
		}
		for _, r := range runRE.FindAllString(tok, -1) {
			add(word(r), r)
		}
	}
	return out
}
