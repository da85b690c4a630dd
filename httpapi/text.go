package httpapi

import (
	"fmt"

	"github.com/custody-mem/custody/internal/jsontext"
)

// checkText rejects a JSON document whose strings are not text (see
// jsontext.Check) with 400 invalid_input naming the field: encoding/json
// would quietly store U+FFFD in their place, a body the caller never sent.
// b must already be valid JSON syntax (decodeBytes checks it first).
func checkText(b []byte) error {
	field, problem := jsontext.Check(b)
	if problem == "" {
		return nil
	}
	return badRequest("invalid_input", field, fmt.Sprintf("%s %s; it would not be stored as sent. "+
		"Send UTF-8 text, with \\u surrogate escapes only in high-low pairs", fieldLabel(field), problem))
}

// fieldLabel names a field in a message.
func fieldLabel(field string) string {
	if field == "" {
		return "a string of the request"
	}
	return fmt.Sprintf("field %q", field)
}
