package sqlite

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	custody "github.com/custody-mem/custody"
)

// parseReceipt decodes a stored receipt as encoding/json decodes it, by
// hand: every record read (a search's ten, a list page's fifty) decodes
// its receipt, and by reflection that was a quarter of reading a record.
// It reads only what appendReceipt writes without escapes: the known keys,
// each once, in any order, strings without a backslash, rules and inputs
// as arrays and objects of such strings or null, the time as RFC 3339 and
// the log index as digits. Anything else (an escape, whitespace, an
// unknown key, a key spelled in another case, which encoding/json would
// also accept) goes to encoding/json, so the result is always its.
func parseReceipt(text string, s *storedReceipt) error {
	if p := (receiptParser{text: text}); p.receipt(s) && p.i == len(text) {
		return nil
	}
	*s = storedReceipt{}
	return json.Unmarshal([]byte(text), s)
}

// receiptParser reads text from i; a method that returns false has found
// what it leaves to encoding/json.
type receiptParser struct {
	text string
	i    int
}

func (p *receiptParser) byte(c byte) bool {
	if p.i < len(p.text) && p.text[p.i] == c {
		p.i++
		return true
	}
	return false
}

// str reads a string with no escape and valid UTF-8 (invalid bytes
// encoding/json would replace).
func (p *receiptParser) str() (string, bool) {
	if !p.byte('"') {
		return "", false
	}
	start := p.i
	for p.i < len(p.text) {
		c := p.text[p.i]
		switch {
		case c == '"':
			s := p.text[start:p.i]
			p.i++
			return s, utf8.ValidString(s)
		case c == '\\' || c < 0x20:
			return "", false
		}
		p.i++
	}
	return "", false
}

func (p *receiptParser) null() bool {
	if strings.HasPrefix(p.text[p.i:], "null") {
		p.i += 4
		return true
	}
	return false
}

func (p *receiptParser) strings() ([]string, bool) {
	if p.null() {
		return nil, true
	}
	if !p.byte('[') {
		return nil, false
	}
	out := []string{}
	if p.byte(']') {
		return out, true
	}
	for {
		v, ok := p.str()
		if !ok {
			return nil, false
		}
		out = append(out, v)
		if p.byte(']') {
			return out, true
		}
		if !p.byte(',') {
			return nil, false
		}
	}
}

func (p *receiptParser) object() (map[string]string, bool) {
	if p.null() {
		return nil, true
	}
	if !p.byte('{') {
		return nil, false
	}
	out := map[string]string{}
	if p.byte('}') {
		return out, true
	}
	for {
		k, ok := p.str()
		if !ok || !p.byte(':') {
			return nil, false
		}
		if _, dup := out[k]; dup {
			return nil, false
		}
		v, ok := p.str()
		if !ok {
			return nil, false
		}
		out[k] = v
		if p.byte('}') {
			return out, true
		}
		if !p.byte(',') {
			return nil, false
		}
	}
}

// receiptKeys are the keys parseReceipt reads, by their bit in seen.
var receiptKeys = map[string]uint{"decision": 0, "policy_version": 1, "rules": 2, "reason": 3, "inputs": 4,
	"error": 5, "actor": 6, "time": 7, "log_index": 8, "same": 9}

func (p *receiptParser) receipt(s *storedReceipt) bool {
	if !p.byte('{') {
		return false
	}
	if p.byte('}') {
		return true
	}
	var seen uint
	for {
		k, ok := p.str()
		bit, known := receiptKeys[k]
		if !ok || !known || seen&(1<<bit) != 0 || !p.byte(':') {
			return false
		}
		seen |= 1 << bit
		if !p.value(k, s) {
			return false
		}
		if p.byte('}') {
			return true
		}
		if !p.byte(',') {
			return false
		}
	}
}

func (p *receiptParser) value(k string, s *storedReceipt) bool {
	var ok bool
	switch k {
	case "rules":
		s.Rules, ok = p.strings()
	case "inputs":
		s.Inputs, ok = p.object()
	case "log_index":
		start := p.i
		for p.i < len(p.text) && p.text[p.i] >= '0' && p.text[p.i] <= '9' {
			p.i++
		}
		digits := p.text[start:p.i]
		if len(digits) > 1 && digits[0] == '0' {
			return false // encoding/json refuses a leading zero
		}
		var err error
		s.LogIndex, err = strconv.ParseUint(digits, 10, 64)
		ok = err == nil
	case "time":
		start := p.i
		if _, ok = p.str(); ok {
			ok = s.Time.UnmarshalJSON([]byte(p.text[start:p.i])) == nil
		}
	default:
		var v string
		if v, ok = p.str(); ok {
			switch k {
			case "decision":
				s.Decision = custody.State(v)
			case "policy_version":
				s.PolicyVersion = v
			case "reason":
				s.Reason = v
			case "error":
				s.Error = v
			case "actor":
				s.Actor = v
			case "same":
				s.Same = v
			}
		}
	}
	return ok
}
