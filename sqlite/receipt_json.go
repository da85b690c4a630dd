package sqlite

import (
	"slices"
	"strconv"
	"unicode/utf8"
)

// appendReceipt appends s as encoding/json marshals it, byte for byte,
// without its reflection: a receipt is written with every record (and
// rewritten with every transition), and marshalling it by reflection was
// a tenth of a batch write's time on the writer's goroutine.
func appendReceipt(b []byte, s *storedReceipt) []byte {
	b = append(b, '{')
	first := true
	field := func(name string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, '"', ':')
	}
	if s.Decision != "" {
		field("decision")
		b = appendJSONString(b, string(s.Decision))
	}
	if s.PolicyVersion != "" {
		field("policy_version")
		b = appendJSONString(b, s.PolicyVersion)
	}
	field("rules")
	if s.Rules == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, r := range s.Rules {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, r)
		}
		b = append(b, ']')
	}
	field("reason")
	b = appendJSONString(b, s.Reason)
	if len(s.Inputs) > 0 {
		field("inputs")
		keys := make([]string, 0, len(s.Inputs))
		for k := range s.Inputs {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			b = appendJSONString(b, s.Inputs[k])
		}
		b = append(b, '}')
	}
	if s.Error != "" {
		field("error")
		b = appendJSONString(b, s.Error)
	}
	if s.Actor != "" {
		field("actor")
		b = appendJSONString(b, s.Actor)
	}
	if !s.Time.IsZero() {
		field("time")
		t, err := s.Time.MarshalJSON()
		if err != nil {
			panic(err) // as json.Marshal fails on it: a time past year 9999
		}
		b = append(b, t...)
	}
	if s.LogIndex != 0 {
		field("log_index")
		b = strconv.AppendUint(b, s.LogIndex, 10)
	}
	if s.Same != "" {
		field("same")
		b = appendJSONString(b, s.Same)
	}
	return append(b, '}')
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends src quoted as encoding/json quotes a string:
// HTML characters escaped, invalid UTF-8 as U+FFFD, U+2028 and U+2029
// escaped.
func appendJSONString(dst []byte, src string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(src); {
		if c := src[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			dst = append(dst, src[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(src[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, src[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, src[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, src[start:]...)
	return append(dst, '"')
}
