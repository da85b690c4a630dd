package lexical

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
)

// A body may be a structured value rather than prose: a JSON object or
// array (what an agent framework's store keeps, such as LangGraph's
// values). Its keys, brackets, true, false and null are the shape every
// such record shares, not what it says: indexed as words, "content" or
// "type" would hold every record, lengthen each, and lend themselves to
// a query's feedback as if they were the best matches' subject. So a
// JSON-shaped text is searched by its values: its strings and numbers,
// in order.

// maxValues bounds the values a structured text is searched by.
const maxValues = 1 << 16

// Values is the text search reads of text: text itself, or, if it is a
// JSON object or array, its string and number values, in order, one per
// line (its keys, punctuation, true, false and null left out). A text
// that only looks like JSON (it does not parse) is read as it is.
func Values(text string) string {
	t := strings.TrimSpace(text)
	if len(t) < 2 || (t[0] != '{' || t[len(t)-1] != '}') && (t[0] != '[' || t[len(t)-1] != ']') {
		return text
	}
	dec := json.NewDecoder(strings.NewReader(t))
	dec.UseNumber()
	var b bytes.Buffer
	// In an object, every other string is a key: the stack holds, for
	// each open container, whether it is an object and, if so, whether a
	// key is due next.
	type frame struct{ object, key bool }
	var stack []frame
	values := 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return text
		}
		if n := len(stack); n > 0 && stack[n-1].object {
			if stack[n-1].key {
				if _, ok := tok.(string); ok {
					stack[n-1].key = false // a key
				} else {
					stack = stack[:n-1] // the object's end
				}
				continue
			}
			stack[n-1].key = true // this value, then a key
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, frame{object: true, key: true})
			case '[':
				stack = append(stack, frame{})
			default:
				stack = stack[:len(stack)-1]
			}
		case string:
			if values < maxValues {
				b.WriteString(v)
				b.WriteByte('\n')
				values++
			}
		case json.Number:
			if values < maxValues {
				b.WriteString(v.String())
				b.WriteByte('\n')
				values++
			}
		}
	}
	return b.String()
}
