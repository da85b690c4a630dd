package mem0api

import (
	"encoding/json"
	"testing"
)

// FuzzParseFilters: a filter body, whatever it holds, is parsed or refused
// with an error; never a panic, and never a scope that reads another user
// than the one it names.
func FuzzParseFilters(f *testing.F) {
	for _, s := range []string{`{"user_id":"alice"}`, `{"AND":[{"user_id":"alice"},{"agent_id":"x"}]}`, `{"OR":[]}`,
		`{"created_at":{"gte":"2026-01-01"}}`, `{"metadata":{"topic":"a"}}`, `{"AND":[{"AND":[{"AND":[]}]}]}`, `null`, `[]`, `{"user_id":1}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if !json.Valid([]byte(raw)) {
			return
		}
		s, err := parseFilters(json.RawMessage(raw))
		if err != nil {
			return
		}
		if s.userID != "" && s.meta["mem0.user_id"] != s.userID {
			t.Fatalf("scope %+v reads user %q but filters on %q", s, s.userID, s.meta["mem0.user_id"])
		}
		_ = s.filters()
	})
}
