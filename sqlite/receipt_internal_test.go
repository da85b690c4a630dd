package sqlite

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
	"pgregory.net/rapid"
)

// Values drawn from small sets, so that a receipt's fields often equal its
// row's and often do not.
var (
	genWord  = rapid.SampledFrom([]string{"", "a", "acme/alice", "user", "fact", "k1", "owner", "true", "false", "confirmed"})
	genState = rapid.SampledFrom([]custody.State{"", custody.StateAdmitted, custody.StateSuspended, custody.StateQuarantined})
	genAuth  = rapid.SampledFrom([]custody.Authority{custody.AuthorityExternal, custody.AuthorityUser, custody.AuthorityConfirmed})
	genZone  = rapid.SampledFrom([]*time.Location{time.UTC, time.FixedZone("", 0), time.FixedZone("CET", 3600), time.FixedZone("", -5*3600)})
)

func genTime(t *rapid.T, label string) time.Time {
	if rapid.Bool().Draw(t, label+"-zero") {
		return time.Time{}
	}
	base := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	return base.Add(time.Duration(rapid.IntRange(0, 3).Draw(t, label))).In(genZone.Draw(t, label+"-zone"))
}

func genRecord(t *rapid.T) *custody.Record {
	r := &custody.Record{State: genState.Draw(t, "state"), PolicyVersion: genWord.Draw(t, "policy"),
		Writer: genWord.Draw(t, "writer"), LogIndex: uint64(rapid.IntRange(0, 2).Draw(t, "index")),
		CreatedAt: genTime(t, "created").UTC(), Channel: genWord.Draw(t, "channel"), Class: custody.Class(genWord.Draw(t, "class")),
		Key: genWord.Draw(t, "key"), Authority: genAuth.Draw(t, "authority"), Audience: genWord.Draw(t, "audience"),
		Session: genWord.Draw(t, "session")}
	for range rapid.IntRange(0, 2).Draw(t, "parents") {
		r.Parents = append(r.Parents, custody.Edge{ID: "p", Weight: 1})
	}
	return r
}

func genReceipt(t *rapid.T) *custody.Receipt {
	if rapid.IntRange(0, 9).Draw(t, "nil") == 0 {
		return nil
	}
	rc := &custody.Receipt{Decision: genState.Draw(t, "decision"), PolicyVersion: genWord.Draw(t, "rc-policy"),
		Reason: genWord.Draw(t, "reason"), Error: genWord.Draw(t, "error"), Actor: genWord.Draw(t, "actor"),
		Time: genTime(t, "time"), LogIndex: uint64(rapid.IntRange(0, 2).Draw(t, "rc-index"))}
	if rapid.Bool().Draw(t, "rules") {
		rc.Rules = rapid.SliceOf(genWord).Draw(t, "rule-list")
	}
	if rapid.Bool().Draw(t, "admitted-by") { // as an admission words it
		rc.Reason = admittedBy(rc.Rules)
	}
	if rapid.Bool().Draw(t, "inputs") {
		rc.Inputs = map[string]string{}
		names := []string{"principal", "channel", "class", "key", "authority", "audience", "has_session", "derived", "roles", "same", "overwrite", "sensitive"}
		for _, n := range rapid.SliceOfDistinct(rapid.SampledFrom(names), rapid.ID).Draw(t, "input-names") {
			rc.Inputs[n] = genWord.Draw(t, "input-"+n)
		}
	}
	return rc
}

// asStoredWhole is rc as a row that keeps receipts whole gives it back.
func asStoredWhole(t *rapid.T, rc *custody.Receipt) *custody.Receipt {
	text := jsonText(rc)
	if text == "null" {
		return nil
	}
	var back custody.Receipt
	if err := json.Unmarshal([]byte(text), &back); err != nil {
		t.Fatal(err)
	}
	return &back
}

// A row reads back exactly the receipt it was given, as it did when it
// kept receipts whole, whatever of the receipt the row happens to repeat
// (allFields: an insert). A receipt written for many rows (a cascade's)
// may leave out only what those rows share, and one an update writes only
// what the update writes with it: read from any row that agrees on those
// fields, it is the receipt written.
func TestReceiptReadsBackAsWritten(t *testing.T) {
	share := map[byte]func(to, from *custody.Record){
		'd': func(to, from *custody.Record) { to.State = from.State },
		'p': func(to, from *custody.Record) { to.PolicyVersion = from.PolicyVersion },
		'l': func(to, from *custody.Record) { to.LogIndex = from.LogIndex },
		'A': func(to, from *custody.Record) { to.Authority = from.Authority },
		'u': func(to, from *custody.Record) { to.Audience = from.Audience },
		'D': func(to, from *custody.Record) { to.Parents = from.Parents },
		// no field of the row decides these
		'r': func(to, from *custody.Record) {}, 'o': func(to, from *custody.Record) {}, 'S': func(to, from *custody.Record) {},
		'R': func(to, from *custody.Record) {},
	}
	for _, may := range []string{allFields, "dl", updatedFields} {
		t.Run(may, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				rc, written, row := genReceipt(t), genRecord(t), genRecord(t)
				if may == allFields {
					row = written
				} else {
					for i := range len(may) {
						share[may[i]](row, written)
					}
				}
				got, err := readReceipt(receiptText(rc, written, may), row)
				if err != nil {
					t.Fatal(err)
				}
				if want := asStoredWhole(t, rc); !reflect.DeepEqual(got, want) {
					t.Fatalf("read back\n%#v\nwant\n%#v", got, want)
				}
			})
		})
	}
}

// An admission's receipt keeps little besides its rules and reason, and a
// row that kept its receipt whole still reads.
func TestReceiptLeavesOutWhatTheRowHolds(t *testing.T) {
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	r := &custody.Record{State: custody.StateAdmitted, PolicyVersion: strings.Repeat("b1", 32), Writer: "acme/alice",
		LogIndex: 5001, CreatedAt: at, Channel: "user", Class: "fact", Key: "k4911", Authority: custody.AuthorityUser, Audience: "owner"}
	rc := &custody.Receipt{Decision: custody.StateAdmitted, PolicyVersion: r.PolicyVersion, Rules: []string{"user-channel"},
		Reason: "admitted by [user-channel]", Actor: "acme/alice", Time: at, LogIndex: 5001,
		Inputs: map[string]string{"audience": "owner", "authority": "user", "channel": "user", "class": "fact", "derived": "false",
			"has_session": "false", "key": "k4911", "overwrite": "false", "principal": "acme/alice", "roles": "user", "sensitive": "false"}}
	text := receiptText(rc, r, allFields)
	want := `{"rules":["user-channel"],"same":"*"}`
	if text != want {
		t.Errorf("stored\n%s\nwant\n%s", text, want)
	}
	whole := jsonText(rc)
	t.Logf("%d bytes instead of %d", len(text), len(whole))
	// As schema 25 stored it, leaving out only what the row holds.
	schema25 := `{"rules":["user-channel"],"reason":"admitted by [user-channel]","inputs":{"overwrite":"false","roles":"user","sensitive":"false"},"same":"dpaltPckKAusD"}`
	for _, stored := range []string{text, whole, schema25} {
		got, err := readReceipt(stored, r)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, rc) {
			t.Errorf("%s read back as %#v", stored, got)
		}
	}
	if rc.Inputs["key"] != "k4911" || rc.Decision != custody.StateAdmitted {
		t.Error("storing changed the caller's receipt: " + strconv.Quote(jsonText(rc)))
	}
}

// A policy version in lowercase hex is stored as its bytes and reads back
// as the same text; any other text is stored and read as it is.
func TestPolicyVersionStored(t *testing.T) {
	hex64 := strings.Repeat("0f", 32)
	for _, v := range []string{hex64, strings.ToUpper(hex64), hex64[:62], hex64 + "00", "v1", "", strings.Repeat("g", 64)} {
		arg := policyVersionArg(v)
		if b, ok := arg.([]byte); ok != (v == hex64) || (ok && len(b) != 32) {
			t.Errorf("%q stored as %T %v", v, arg, arg)
		}
		var got string
		src := arg
		if s, ok := arg.(string); ok {
			src = s
		}
		if err := (policyVersionCol{&got}).Scan(src); err != nil || got != v {
			t.Errorf("%q read back as %q, %v", v, got, err)
		}
	}
	var got string
	if err := (policyVersionCol{&got}).Scan(int64(1)); err == nil {
		t.Error("an integer policy version scanned")
	}
}
