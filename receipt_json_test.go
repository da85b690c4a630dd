package custody_test

import (
	"encoding/json"
	"testing"
	"time"

	custody "github.com/custody-mem/custody"
)

// A write's receipt, encoded as encoding/json does and by AppendJSON
// (httpapi/decision_json_test.go checks the two give the same bytes).
//
//	go test -run '^$' -bench ReceiptJSON -benchmem .
func BenchmarkReceiptJSON(b *testing.B) {
	r := &custody.Receipt{Decision: custody.StateAdmitted, PolicyVersion: "9f2c4e1a0b7d3c5e8f6a2b4d1c3e5f7a9b0d2c4e6f8a1b3c5d7e9f0a2b4c6d8e", Rules: []string{"admit-user"},
		Reason: "admitted by [admit-user]", Inputs: map[string]string{"channel": "user", "class": "fact", "principal": "alice", "overwrite": "false", "sensitive": "false"},
		Actor: "alice", Time: time.Unix(1764900000, 123456789).UTC(), LogIndex: 123456}
	b.Run("encoding/json", func(b *testing.B) {
		for b.Loop() {
			if _, err := json.Marshal(r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("AppendJSON", func(b *testing.B) {
		for b.Loop() {
			if _, ok := r.AppendJSON(make([]byte, 0, 256)); !ok {
				b.Fatal("AppendJSON failed")
			}
		}
	})
}
