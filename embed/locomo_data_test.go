package embed

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// LoCoMoConv is one LoCoMo conversation as the benchmark stores it: each
// turn as one episode (Keys[i], Bodies[i]), each answerable question with
// its evidence turns.
type LoCoMoConv struct {
	Name      string
	Keys      []string
	Bodies    []string
	Questions []LoCoMoQuestion
}

// LoCoMoQuestion is a question of categories 1-4.
type LoCoMoQuestion struct {
	Text     string
	Category int
	Evidence []string
}

// LoadLoCoMo reads the conversations (*.json) of dir, in name order.
func LoadLoCoMo(dir string) ([]LoCoMoConv, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(names) == 0 {
		return nil, fmt.Errorf("no LoCoMo conversations (*.json) in %s: %v", dir, err)
	}
	sort.Strings(names)
	var out []LoCoMoConv
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			return nil, err
		}
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(data, &raw); err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		c := LoCoMoConv{Name: filepath.Base(n)}
		for s := 1; ; s++ {
			turnsRaw, ok := raw[fmt.Sprintf("session_%d", s)]
			if !ok {
				if _, more := raw[fmt.Sprintf("session_%d_date_time", s)]; more {
					continue
				}
				break
			}
			var date string
			json.Unmarshal(raw[fmt.Sprintf("session_%d_date_time", s)], &date)
			var turns []struct {
				Speaker, DiaID, Text, Caption string
			}
			var tr []map[string]any
			if err := json.Unmarshal(turnsRaw, &tr); err != nil {
				return nil, fmt.Errorf("%s: session %d: %w", n, s, err)
			}
			for _, t := range tr {
				str := func(k string) string { v, _ := t[k].(string); return v }
				turns = append(turns, struct{ Speaker, DiaID, Text, Caption string }{str("speaker"), str("dia_id"), str("text"), str("blip_caption")})
			}
			for _, t := range turns {
				body := fmt.Sprintf("%s (%s): %s", t.Speaker, date, t.Text)
				if t.Caption != "" {
					body += " [shares: " + t.Caption + "]"
				}
				c.Keys = append(c.Keys, t.DiaID)
				c.Bodies = append(c.Bodies, body)
			}
		}
		var qa []struct {
			Question string   `json:"question"`
			Evidence []string `json:"evidence"`
			Category int      `json:"category"`
		}
		if err := json.Unmarshal(raw["qa"], &qa); err != nil {
			return nil, fmt.Errorf("%s: qa: %w", n, err)
		}
		for _, q := range qa {
			if q.Category < 1 || q.Category > 4 {
				continue
			}
			ev := make([]string, 0, len(q.Evidence))
			for _, e := range q.Evidence {
				ev = append(ev, strings.TrimSpace(e))
			}
			c.Questions = append(c.Questions, LoCoMoQuestion{Text: q.Question, Category: q.Category, Evidence: ev})
		}
		out = append(out, c)
	}
	return out, nil
}
