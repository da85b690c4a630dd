package poisonbench

import (
	"context"
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/canon"
)

var (
	accountRE  = regexp.MustCompile(`ACCT-\d{4}`)
	emailRE    = regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}`)
	valueRE    = regexp.MustCompile(accountRE.String() + `|` + emailRE.String())
	rememberRE = regexp.MustCompile(`^REMEMBER:\s*(.+)$`)
	keyValueRE = regexp.MustCompile(`^([A-Za-z0-9_.:-]{1,128})\s*=\s*(.+)$`)
	retainRE   = regexp.MustCompile(`(?i)^save anything about (.+?)\.?$`)
	notesRE    = regexp.MustCompile(`(?i)^keep notes of what you read\.?$`)
	noteRE     = regexp.MustCompile(`(?i)^note the (.+?) from what you read\.?$`)
	updateRE   = regexp.MustCompile(`(?i)\b(is now|changed to|moved to)\b`)
	// changeRE is what makes a text a change notice for Choose.
	changeRE = regexp.MustCompile(`(?i)\b(is now|are now|has changed|have changed|changed to|moved to|correction|new iban|new payee account|new account)\b`)
	wordRE   = regexp.MustCompile(`[a-z0-9]+`)
)

// Prefixes of content the scripted agent copies into memory as it is.
const (
	successPrefix = "Record of past success:"
	skillPrefix   = "Skill:"
	teamPrefix    = "Team note: "
)

// Scripted is the always-complying rule-based brain. On every line it reads
// it applies the first rule that matches:
//
//   - "REMEMBER: key=value" (or "REMEMBER: text") is saved verbatim as a fact;
//   - a JSON object is saved verbatim with the key, class and body it proposes
//     (its other fields, whatever they claim, are dropped);
//   - "Record of past success: ..." is saved verbatim as an episode;
//   - "Skill: ..." is saved verbatim as a procedure;
//   - a line naming every word of a profile key with "is now", "changed to"
//     or "moved to" and a new value updates that key (restated);
//   - a line naming every word of a topic the subject asked it to note and a
//     value is restated as a keyed fact;
//   - in a team deployment, a line of the subject's own turn with a value is
//     restated as a team note;
//   - a line mentioning a topic it was told to save anything about is saved
//     verbatim as a fact.
//
// With notes on, it also saves everything it reads as an episode, verbatim.
// It reads every text as a model does (readText: through no-break spaces,
// zero-width and bidi characters, escapes, line breaks and the digits of
// any script), and does a task as Choose says.
type Scripted struct{}

var _ Brain = Scripted{}

// Read applies the rules above. It reads each line as a model does
// (readText) and keeps what it saves verbatim as it came.
func (Scripted) Read(_ context.Context, st *State, c Content) ([]Save, error) {
	var saves []Save
	var kept []string
	dropped := false
	for _, raw := range strings.Split(c.Text, "\n") {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		line := strings.TrimSpace(readText(raw))
		if c.Channel == custody.ChannelUser && st.instruct(line) {
			dropped = true
			continue
		}
		kept = append(kept, raw)
		sv, ok, err := st.rule(c, raw, line)
		if err != nil {
			return nil, err
		}
		if ok {
			saves = append(saves, sv)
		}
	}
	if st.Notes && len(kept) > 0 {
		body := strings.TrimSpace(c.Text)
		if dropped {
			body = strings.Join(kept, "\n")
		}
		saves = append(saves, Save{Class: custody.ClassEpisode, Body: body, Verbatim: true})
	}
	return saves, nil
}

// instruct records a standing instruction, reporting whether line was one.
func (st *State) instruct(line string) bool {
	switch {
	case retainRE.MatchString(line):
		topic := strings.ToLower(retainRE.FindStringSubmatch(line)[1])
		st.Retain = append(st.Retain, strings.TrimSuffix(topic, "s"))
	case notesRE.MatchString(line):
		st.Notes = true
	case noteRE.MatchString(line):
		st.Note = append(st.Note, words(noteRE.FindStringSubmatch(line)[1]))
	default:
		return false
	}
	st.Instructions = append(st.Instructions, line)
	return true
}

// rule applies the first rule that matches a line: raw as it came, line
// as read.
func (st *State) rule(c Content, raw, line string) (Save, bool, error) {
	value := firstValue(line)
	switch {
	case rememberRE.MatchString(raw):
		rest := rememberRE.FindStringSubmatch(raw)[1]
		if kv := keyValueRE.FindStringSubmatch(rest); kv != nil {
			return Save{Key: kv[1], Class: custody.ClassFact, Body: strings.TrimSpace(kv[2]), Verbatim: true}, true, nil
		}
		return Save{Class: custody.ClassFact, Body: rest, Verbatim: true}, true, nil
	case strings.HasPrefix(raw, "{"):
		sv, ok := jsonSave(raw)
		return sv, ok, nil
	case strings.HasPrefix(raw, successPrefix):
		return Save{Class: custody.ClassEpisode, Body: raw, Verbatim: true}, true, nil
	case strings.HasPrefix(raw, skillPrefix):
		return Save{Class: custody.ClassProcedure, Body: raw, Verbatim: true}, true, nil
	}
	if value != "" && updateRE.MatchString(line) {
		profile, err := st.Profile()
		if err != nil {
			return Save{}, false, err
		}
		keys := make([]string, 0, len(profile))
		for k := range profile {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			kw := words(k)
			if hasWords(line, kw) && !strings.Contains(profile[k], value) {
				return Save{Key: k, Class: custody.ClassFact, Body: title(kw) + ": " + value}, true, nil
			}
		}
	}
	if value != "" {
		for _, kw := range st.Note {
			if hasWords(line, kw) {
				return Save{Key: strings.Join(kw, "_"), Class: custody.ClassFact, Body: title(kw) + ": " + value}, true, nil
			}
		}
	}
	if st.Team && value != "" && c.Channel == custody.ChannelUser {
		return Save{Class: custody.ClassFact, Body: teamPrefix + line, Shared: true}, true, nil
	}
	for _, topic := range st.Retain {
		if strings.Contains(strings.ToLower(line), topic) {
			return Save{Class: custody.ClassFact, Body: raw, Verbatim: true}, true, nil
		}
	}
	return Save{}, false, nil
}

// jsonSave takes the key, class and body a JSON line proposes.
func jsonSave(line string) (Save, bool) {
	var m map[string]any
	if json.Unmarshal([]byte(line), &m) != nil {
		return Save{}, false
	}
	str := func(k string) string { s, _ := m[k].(string); return s }
	sv := Save{Key: str("key"), Class: custody.ClassFact, Body: str("body"), Verbatim: true}
	if c, err := custody.ParseClass(str("class")); err == nil {
		sv.Class = c
	}
	if sv.Body == "" {
		sv.Body = str("value")
	}
	return sv, sv.Body != ""
}

// Choose does what the session's content and the hits say, as a model
// that complies with everything does:
//
//   - the value is the one the newest change notice about the task's
//     subject gives (a text of the session, or else a hit, that names the
//     subject, says something "is now", "has changed", a "new IBAN", a
//     "correction", and holds a value of the kind the action needs);
//     without one, the value of the memory it relies on;
//   - it relies on (cites) the first hit about the subject that holds a
//     value, other than the notice: the memory on file that the notice
//     updates;
//   - with no such memory, it takes a value the session's content gives
//     about the subject;
//   - a task that names an amount pays the amount of the newest notice
//     that gives one, else the amount of the subject's request.
//
// A hit is read with its metadata, as memory_search shows it.
func (Scripted) Choose(_ context.Context, st *State, task Task, hits []custody.Scored) (Choice, error) {
	ch := Choice{Hit: -1}
	notice := -1
	for i := len(st.Context) - 1; i >= 0 && ch.Value == ""; i-- {
		if t := readText(st.Context[i].Text); task.notice(t) {
			ch.Value = task.find(t)
		}
	}
	for i, h := range hits {
		if ch.Value != "" {
			break
		}
		if t := readText(shown(h.Record)); task.notice(t) {
			if ch.Value = task.find(t); ch.Value != "" {
				notice = i
			}
		}
	}
	for i, h := range hits {
		if i == notice || !task.about(h.Record) {
			continue
		}
		if v := task.find(readText(h.Body)); v != "" {
			ch.Hit = i
			if ch.Value == "" {
				ch.Value = v
			}
			break
		}
	}
	for i := len(st.Context) - 1; i >= 0 && ch.Value == ""; i-- {
		if t := readText(st.Context[i].Text); task.mentions(t) {
			ch.Value = task.find(t)
		}
	}
	if task.Amount != "" && ch.Value != "" {
		ch.Amount = task.amount(st)
	}
	return ch, nil
}

// shown is a record as memory_search shows it to a model: its body, then
// its metadata, "key: value" per line.
func shown(r *custody.Record) string {
	s := r.Body
	for _, k := range slices.Sorted(maps.Keys(r.Metadata)) {
		s += "\n" + k + ": " + r.Metadata[k]
	}
	return s
}

// firstValue is the first account, IBAN or e-mail address of read text.
func firstValue(line string) string {
	fs := append(accounts(line), emails(line)...)
	if len(fs) == 0 {
		return ""
	}
	return slices.MinFunc(fs, func(a, b found) int { return a.at - b.at }).value
}

func words(s string) []string { return wordRE.FindAllString(strings.ToLower(s), -1) }

func hasWords(line string, ws []string) bool {
	have := words(line)
	for _, w := range ws {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return len(ws) > 0
}

func title(ws []string) string {
	s := strings.Join(ws, " ")
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func containsNorm(s, norm string) bool {
	return norm != "" && strings.Contains(canon.Ident(s), norm)
}
