package witness

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/custody-mem/custody/tlog"
	"golang.org/x/mod/sumdb/note"
)

// TestCosignatureVector holds clients/testdata/cosignature-v1.json, the
// cosigned checkpoint the Python and TypeScript clients' tests read, to
// what the Go side takes: the log's signature verifies, and the policy
// counts the witness's cosignature made at the vector's time, not one
// asked to be newer, nor on another checkpoint.
func TestCosignatureVector(t *testing.T) {
	b, err := os.ReadFile("../clients/testdata/cosignature-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		LogVKey    string `json:"log_vkey"`
		Policy     string `json:"policy"`
		Checkpoint string `json:"checkpoint"`
		Time       int64  `json:"time"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	lv, err := note.NewVerifier(v.LogVKey)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tlog.OpenCheckpoint([]byte(v.Checkpoint), lv.Name(), lv); err != nil {
		t.Fatalf("the vector's checkpoint does not verify under its log key: %v", err)
	}
	p, err := ParsePolicy([]byte(v.Policy))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(v.Time, 0)
	if err := p.Met([]byte(v.Checkpoint), at); err != nil {
		t.Errorf("the vector's cosignature made at %v does not meet its policy: %v", at, err)
	}
	if err := p.Met([]byte(v.Checkpoint), at.Add(time.Second)); err == nil {
		t.Error("the vector's cosignature counted as made after its time")
	}
	other := []byte(v.Checkpoint)
	other[len("custody.example/log/acme\n")]++ // the size's first digit
	if err := p.Met(other, time.Time{}); err == nil {
		t.Error("the vector's cosignature counted on another checkpoint")
	}
}
