package independent_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func unhex(t *testing.T, what, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return b
}

func sha256hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func hmacSHA256(key, msg []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(msg)
	return m.Sum(nil)
}

// The known-answer vectors of docs/log-format.md section 6, one of each
// entry kind: this package's decoder, written from the doc, reads each
// leaf to the fields the vector states, its leaf hash and signature check,
// and every hash the doc defines is recomputed from its preimages as the
// doc says. A changed byte, field or preimage fails.
func TestLogVectors(t *testing.T) {
	raw, err := os.ReadFile("../docs/log-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var vs []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &vs); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	stated, signedBy := map[string][]string{}, map[string][]string{}
	for i, rawV := range vs {
		var v struct {
			Kind     string `json:"kind"`
			Signer   string `json:"signer_public_key"`
			Leaf     string `json:"leaf"`
			LeafHash string `json:"leaf_hash"`
		}
		var want struct {
			Tenant        string            `json:"tenant"`
			RecordID      string            `json:"record_id"`
			RecordIDs     []string          `json:"record_ids"`
			Transition    string            `json:"transition"`
			PrevState     string            `json:"prev_state"`
			NewState      string            `json:"new_state"`
			BodyHash      string            `json:"body_hash"`
			PolicyVersion string            `json:"policy_version"`
			Actor         string            `json:"actor"`
			Time          string            `json:"time"`
			Details       map[string]string `json:"details"`
			KeyID         string            `json:"key_id"`
			Signature     string            `json:"signature"`
		}
		var pre struct {
			Body      *string           `json:"body"`
			Salt      string            `json:"salt"`
			Metadata  map[string]string `json:"metadata"`
			Inputs    map[string]string `json:"inputs"`
			Action    string            `json:"action"`
			Args      map[string]any    `json:"args"`
			Policy    *string           `json:"policy"`
			TokenHash string            `json:"token_hash"`
			SealedKey string            `json:"sealed_key"`
		}
		b, _ := json.Marshal(rawV)
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(rawV["entry"], &want); err != nil {
			t.Fatalf("vector %d: %v", i, err)
		}
		if p, ok := rawV["preimages"]; ok {
			if err := json.Unmarshal(p, &pre); err != nil {
				t.Fatalf("vector %d: %v", i, err)
			}
		}
		kinds[v.Kind] = true
		fail := func(format string, args ...any) {
			t.Helper()
			t.Errorf("vector %d (%s): %s", i, v.Kind, fmt.Sprintf(format, args...))
		}

		leaf := unhex(t, "leaf", v.Leaf)
		e, err := decodeLeaf(leaf)
		if err != nil {
			fail("decoding: %v", err)
			continue
		}
		at := time.Unix(int64(e.Seconds), int64(e.Nanos)).UTC().Format(time.RFC3339Nano)
		got := []string{e.Tenant, e.RecordID, strings.Join(e.RecordIDs, " "), e.Transition, e.PrevState, e.State,
			hex.EncodeToString(e.BodyHash), e.PolicyVersion, e.Actor, at, e.KeyID, hex.EncodeToString(e.Signature)}
		exp := []string{want.Tenant, want.RecordID, strings.Join(want.RecordIDs, " "), want.Transition, want.PrevState, want.NewState,
			want.BodyHash, want.PolicyVersion, want.Actor, want.Time, want.KeyID, want.Signature}
		if !slices.Equal(got, exp) || fmt.Sprint(e.Details) != fmt.Sprint(want.Details) {
			fail("decoded\n%q %v\nthe vector states\n%q %v", got, e.Details, exp, want.Details)
		}
		if h := sha256.Sum256(append([]byte{0}, leaf...)); hex.EncodeToString(h[:]) != v.LeafHash {
			fail("leaf hash %x, the vector states %s", h, v.LeafHash)
		}
		pub := ed25519.PublicKey(unhex(t, "signer", v.Signer))
		if e.KeyID != keyID(pub) || !ed25519.Verify(pub, e.signed, e.Signature) {
			fail("the signature does not verify under the signer's key")
		}
		d := e.Details

		// The hashes, from their preimages.
		salt := unhex(t, "salt", pre.Salt)
		if pre.Body != nil && hex.EncodeToString(hmacSHA256(salt, []byte(*pre.Body))) != hex.EncodeToString(e.BodyHash) {
			fail("BodyHash is not HMAC-SHA256(salt, body)")
		}
		if pre.Metadata != nil {
			m, _ := json.Marshal(pre.Metadata)
			if hex.EncodeToString(hmacSHA256(salt, append([]byte("custody-metadata\x00"), m...))) != d["metadata"] {
				fail("metadata is not HMAC-SHA256(salt, \"custody-metadata\\x00\" ‖ JSON)")
			}
		}
		if pre.Inputs != nil {
			var in bytes.Buffer
			for _, k := range slices.Sorted(func(yield func(string) bool) {
				for k := range pre.Inputs {
					if !yield(k) {
						return
					}
				}
			}) {
				in.WriteString(k + "\x00" + pre.Inputs[k] + "\x00")
			}
			if sha256hex(in.Bytes()) != d["inputs_sha256"] {
				fail("inputs_sha256 %s is not SHA-256 of the sorted inputs", d["inputs_sha256"])
			}
			if len(pre.Inputs) == 0 && d["inputs_sha256"] != sha256hex(nil) {
				fail("no inputs, but inputs_sha256 is not SHA-256 of the empty string")
			}
		}
		if pre.Action != "" {
			a, _ := json.Marshal(pre.Args)
			if sha256hex(append([]byte(pre.Action+"\x00"), a...)) != d["args_sha256"] || d["action"] != pre.Action {
				fail("args_sha256 is not SHA-256(action ‖ 0x00 ‖ JSON of the arguments)")
			}
		}
		if pre.Policy != nil && (sha256hex([]byte(*pre.Policy)) != d["policy_sha256"] || e.PolicyVersion != d["policy_sha256"]) {
			fail("policy_sha256 and PolicyVersion are not SHA-256 of the policy text")
		}
		if pre.TokenHash != "" && sha256hex(unhex(t, "token hash", pre.TokenHash)) != d["token_digest"] {
			fail("token_digest is not SHA-256 of the token hash")
		}
		if pre.SealedKey != "" && sha256hex(unhex(t, "sealed key", pre.SealedKey)) != d["sealed_key_digest"] {
			fail("sealed_key_digest is not SHA-256 of the sealed key")
		}
		// An actor's entries are signed by the key its principal entries state.
		if strings.HasPrefix(e.Transition, "principal") {
			stated[e.Tenant+"/"+d["name"]] = append(stated[e.Tenant+"/"+d["name"]], d["public_key"])
		} else if e.Actor != "server" {
			signedBy[e.Actor] = append(signedBy[e.Actor], hex.EncodeToString(pub))
		}
		// Values: times RFC 3339 UTC; lists comma-separated.
		for _, k := range []string{"created_at", "expires_at", "until", "resumed_at"} {
			if s := d[k]; s != "" {
				if tm, err := time.Parse(time.RFC3339Nano, s); err != nil || tm.Location() != time.UTC || tm.UTC().Format(time.RFC3339Nano) != s {
					fail("%s %q is not RFC 3339 in UTC", k, s)
				}
			}
		}
		if p := d["parents"]; p != "" {
			for _, item := range strings.Split(p, ",") {
				id, w, ok := strings.Cut(item, "=")
				if _, err := strconv.ParseFloat(w, 64); !ok || id == "" || err != nil {
					fail("parents item %q is not id=weight", item)
				}
			}
		}
	}
	for _, k := range []string{"admission", "approve", "erase", "suspend", "gate", "confirm_action", "session", "observation", "endorse", "policy",
		"erasure", "principal", "principal_update", "principal_rotate", "principal_revoke", "pause", "resume"} {
		if !kinds[k] {
			t.Errorf("no vector of %s", k)
		}
	}
	if len(signedBy) == 0 {
		t.Error("no vector is signed by a principal")
	}
	for actor, keys := range signedBy {
		for _, k := range keys {
			if len(stated[actor]) == 0 || !slices.Contains(stated[actor], k) {
				t.Errorf("an entry of %s is signed by %s, which no principal entry of %s states", actor, k, actor)
			}
		}
	}
}
