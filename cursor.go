package custody

import (
	"encoding/base64"
	"strings"
)

// EncodeCursor makes an opaque page cursor from the last id of a page.
func EncodeCursor(id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte("c1:" + id))
}

// DecodeCursor reads a cursor; "" is the first page.
func DecodeCursor(c string) (string, error) {
	if c == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	id, ok := strings.CutPrefix(string(b), "c1:")
	if err != nil || !ok || !validID(id) {
		return "", invalid("cursor", "cursor %q is not one this server issued; start again without it", c)
	}
	return id, nil
}

// validID checks the shape of a record id (a ULID: 26 Crockford base32
// characters).
func validID(id string) bool {
	if len(id) != 26 {
		return false
	}
	for _, r := range id {
		if !strings.ContainsRune("0123456789ABCDEFGHJKMNPQRSTVWXYZ", r) {
			return false
		}
	}
	return true
}

// ValidID reports whether id has the shape of a custody id.
func ValidID(id string) bool { return validID(id) }
