// Package jsontext is what custody needs of JSON text beyond encoding/json:
// it quotes a string as encoding/json does, without reflection
// (AppendString), and finds the strings of a JSON document that are not text:
// raw bytes that are not UTF-8 and \u escapes of lone UTF-16 surrogates.
// encoding/json quietly turns both into U+FFFD, so a decoder that must keep
// what the client sent checks the raw bytes with Check first.
package jsontext

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Check reports the first string of the JSON document b that is not text:
// the dotted path of object keys leading to it ("" at the top level) and
// what is wrong ("holds a lone surrogate escape \ud800"), or two empty
// strings. A U+FFFD the sender did send, raw or as "\ufffd", is text, as
// is an escaped surrogate pair. b must be valid JSON syntax.
func Check(b []byte) (field, problem string) {
	if utf8.Valid(b) && !bytes.Contains(b, []byte(`\u`)) {
		return "", "" // the common case: nothing to look at
	}
	type frame struct {
		obj     bool
		wantKey bool
		key     string
	}
	var stack []frame
	path := func() string {
		var keys []string
		for _, f := range stack {
			if f.obj && f.key != "" {
				keys = append(keys, f.key)
			}
		}
		return strings.Join(keys, ".")
	}
	for i := 0; i < len(b); {
		switch b[i] {
		case '{':
			stack = append(stack, frame{obj: true, wantKey: true})
			i++
		case '[':
			stack = append(stack, frame{})
			i++
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			i++
		case ',':
			if n := len(stack); n > 0 && stack[n-1].obj {
				stack[n-1].wantKey = true
			}
			i++
		case '"':
			end, problem := scanString(b, i)
			isKey := len(stack) > 0 && stack[len(stack)-1].obj && stack[len(stack)-1].wantKey
			if problem != "" {
				if isKey {
					return path(), "a field name " + problem
				}
				return path(), problem
			}
			if isKey {
				var k string
				_ = json.Unmarshal(b[i:end], &k) // valid: checked above and by the decoder
				stack[len(stack)-1].key, stack[len(stack)-1].wantKey = k, false
			}
			i = end
		default:
			i++
		}
	}
	return "", ""
}

// scanString reads the JSON string that starts at b[start] (a quote) and
// returns the index just past its closing quote and, when the string is not
// text, what is wrong with it.
func scanString(b []byte, start int) (end int, problem string) {
	i := start + 1
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			return i + 1, problem
		case c == '\\':
			if i+1 < len(b) && b[i+1] == 'u' {
				r, ok := hex4(b, i+2)
				switch {
				case !ok:
					i += 2
				case r >= 0xD800 && r <= 0xDBFF:
					if lo, ok := hex4(b, i+8); ok && i+7 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' && lo >= 0xDC00 && lo <= 0xDFFF {
						i += 12
						continue
					}
					if problem == "" {
						problem = fmt.Sprintf(`holds a lone surrogate escape \u%04x`, r)
					}
					i += 6
				case r >= 0xDC00 && r <= 0xDFFF:
					if problem == "" {
						problem = fmt.Sprintf(`holds a lone surrogate escape \u%04x`, r)
					}
					i += 6
				default:
					i += 6
				}
				continue
			}
			i += 2
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 && problem == "" {
				problem = fmt.Sprintf("holds bytes that are not UTF-8 (0x%02x at byte %d)", c, i)
			}
			i += size
		}
	}
	return len(b), problem
}

// hex4 reads four hex digits at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i < 0 || i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
