package sqlite

import (
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	custody "github.com/custody-mem/custody"
)

// A receipt repeats much of its record: its decision is the record's state;
// its policy version, actor, time and log index are usually the record's;
// most of an admission's inputs are the record's own fields. Stored whole,
// it was three quarters of a record's row, and a cascade rewrites every row
// it suspends. So the row keeps the receipt without what the row already
// holds, naming what it left out in "same"; reading puts it back. A field
// is left out only when putting it back gives exactly the value the
// receipt had; rows written before this kept their receipts whole, and
// read as they always did.
type storedReceipt struct {
	Decision      custody.State     `json:"decision,omitempty"`
	PolicyVersion string            `json:"policy_version,omitempty"`
	Rules         []string          `json:"rules"`
	Reason        string            `json:"reason,omitempty"`
	Inputs        map[string]string `json:"inputs,omitempty"`
	Error         string            `json:"error,omitempty"`
	Actor         string            `json:"actor,omitempty"`
	Time          time.Time         `json:"time,omitzero"`
	LogIndex      uint64            `json:"log_index,omitempty"`
	Same          string            `json:"same,omitempty"`
}

// elision is a field a receipt may leave to its record's row, named by flag.
type elision struct {
	flag byte
	same func(*storedReceipt, *custody.Record) bool // the receipt holds the row's value
	drop func(*storedReceipt)
	fill func(*storedReceipt, *custody.Record)
}

var elisions = []elision{
	{'d', func(s *storedReceipt, r *custody.Record) bool { return s.Decision == r.State },
		func(s *storedReceipt) { s.Decision = "" }, func(s *storedReceipt, r *custody.Record) { s.Decision = r.State }},
	{'p', func(s *storedReceipt, r *custody.Record) bool { return s.PolicyVersion == r.PolicyVersion },
		func(s *storedReceipt) { s.PolicyVersion = "" }, func(s *storedReceipt, r *custody.Record) { s.PolicyVersion = r.PolicyVersion }},
	{'a', func(s *storedReceipt, r *custody.Record) bool { return s.Actor == r.Writer },
		func(s *storedReceipt) { s.Actor = "" }, func(s *storedReceipt, r *custody.Record) { s.Actor = r.Writer }},
	{'l', func(s *storedReceipt, r *custody.Record) bool { return s.LogIndex == r.LogIndex },
		func(s *storedReceipt) { s.LogIndex = 0 }, func(s *storedReceipt, r *custody.Record) { s.LogIndex = r.LogIndex }},
	// The row keeps times as nanoseconds in UTC: a time in another zone
	// keeps its own.
	{'t', func(s *storedReceipt, r *custody.Record) bool {
		_, offset := s.Time.Zone()
		return offset == 0 && s.Time.Equal(r.CreatedAt)
	}, func(s *storedReceipt) { s.Time = time.Time{} }, func(s *storedReceipt, r *custody.Record) { s.Time = r.CreatedAt.UTC() }},
	input('P', "principal", func(r *custody.Record) string { return r.Writer }),
	input('c', "channel", func(r *custody.Record) string { return r.Channel }),
	input('k', "class", func(r *custody.Record) string { return string(r.Class) }),
	input('K', "key", func(r *custody.Record) string { return r.Key }),
	input('A', "authority", func(r *custody.Record) string { return r.Authority.String() }),
	input('u', "audience", func(r *custody.Record) string { return r.Audience }),
	input('s', "has_session", func(r *custody.Record) string { return strconv.FormatBool(r.Session != "") }),
	input('D', "derived", func(r *custody.Record) string { return strconv.FormatBool(len(r.Parents) > 0) }),
	// What the row does not hold but most receipts say (schema 26): the
	// reason of an admission, which its rules spell (custody's Policy.admit),
	// and the inputs of a user's write that neither overwrites nor is
	// sensitive.
	{'r', func(s *storedReceipt, _ *custody.Record) bool {
		return s.Reason != "" && s.Reason == admittedBy(s.Rules)
	},
		func(s *storedReceipt) { s.Reason = "" }, func(s *storedReceipt, _ *custody.Record) { s.Reason = admittedBy(s.Rules) }},
	input('o', "overwrite", func(*custody.Record) string { return "false" }),
	input('S', "sensitive", func(*custody.Record) string { return "false" }),
	input('R', "roles", func(*custody.Record) string { return "user" }),
}

// everyField stands in same for allFields, every field left out: most
// admissions' receipts (schema 26).
const everyField = "*"

// admittedBy is the reason of an admission by rules, as custody's
// Policy.admit words it.
func admittedBy(rules []string) string { return "admitted by " + fmt.Sprint(rules) }

// input is the elision of an admission input that the row holds as of.
func input(flag byte, name string, of func(*custody.Record) string) elision {
	return elision{flag,
		func(s *storedReceipt, r *custody.Record) bool { v, ok := s.Inputs[name]; return ok && v == of(r) },
		func(s *storedReceipt) { delete(s.Inputs, name) },
		func(s *storedReceipt, r *custody.Record) {
			if s.Inputs == nil {
				s.Inputs = map[string]string{}
			}
			s.Inputs[name] = of(r)
		}}
}

// allFields lets a receipt leave out anything its row holds.
const allFields = "dpaltPckKAusDroSR"

// updatedFields are the fields of a row that UpdateRecord writes with the
// receipt, and those no field of the row decides: an update leaves out
// only those, whatever the record it is given says of the others.
const updatedFields = "dplAuDroSR"

// receiptText is rc as the row of r stores it, leaving out the fields
// named in may that r holds. Only the fields of r that may names are read.
func receiptText(rc *custody.Receipt, r *custody.Record, may string) string {
	if rc == nil {
		return "null"
	}
	s := storedReceipt{Decision: rc.Decision, PolicyVersion: rc.PolicyVersion, Rules: rc.Rules, Reason: rc.Reason,
		Inputs: maps.Clone(rc.Inputs), Error: rc.Error, Actor: rc.Actor, Time: rc.Time, LogIndex: rc.LogIndex}
	var same []byte
	for _, e := range elisions {
		if strings.IndexByte(may, e.flag) >= 0 && e.same(&s, r) {
			e.drop(&s)
			same = append(same, e.flag)
		}
	}
	s.Same = string(same)
	if s.Same == allFields {
		s.Same = everyField
	}
	return string(appendReceipt(make([]byte, 0, 512), &s))
}

// readReceipt is the receipt the row of r stores in text.
func readReceipt(text string, r *custody.Record) (*custody.Receipt, error) {
	if text == "" || text == "null" {
		return nil, nil
	}
	var s storedReceipt
	if err := parseReceipt(text, &s); err != nil {
		return nil, err
	}
	if s.Same == everyField {
		s.Same = allFields
	}
	for _, e := range elisions {
		if strings.IndexByte(s.Same, e.flag) >= 0 {
			e.fill(&s, r)
		}
	}
	return &custody.Receipt{Decision: s.Decision, PolicyVersion: s.PolicyVersion, Rules: s.Rules, Reason: s.Reason,
		Inputs: s.Inputs, Error: s.Error, Actor: s.Actor, Time: s.Time, LogIndex: s.LogIndex}, nil
}
