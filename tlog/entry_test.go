package tlog

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// testKey returns a fixed Ed25519 key so that signatures are reproducible.
func testKey(seedByte byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seedByte}, ed25519.SeedSize))
}

func sampleEntry() *Entry {
	body := sha256.Sum256([]byte("the body"))
	return &Entry{
		Tenant:        "acme",
		RecordID:      "rec_01",
		RecordIDs:     []string{"rec_02", "rec_03"},
		Transition:    "quarantine",
		PrevState:     "pending",
		NewState:      "quarantined",
		BodyHash:      body[:],
		PolicyVersion: "v7",
		Actor:         "acme/alice",
		Time:          time.Date(2025, 3, 4, 5, 6, 7, 123456789, time.UTC),
		Details:       map[string]string{"reason": "injection suspected", "audience": "team", "": "empty key"},
	}
}

func TestEntryRoundTrip(t *testing.T) {
	signed := sampleEntry()
	signed.Sign(testKey(1))
	for _, tc := range []struct {
		name string
		e    *Entry
	}{
		{"zero", &Entry{}},
		{"sample unsigned", sampleEntry()},
		{"sample signed", signed},
		{"server-wide", &Entry{Transition: "policy", Actor: "server", Details: map[string]string{"version": "v8"}, Time: time.Unix(1700000000, 0).UTC()}},
		{"before 1970", &Entry{Time: time.Date(1969, 12, 31, 23, 59, 59, 999999999, time.UTC)}},
		{"binary strings", &Entry{Tenant: "\x00\xff", RecordID: "\x80", Details: map[string]string{"\xff": "\x00"}}},
		{"unicode", &Entry{Tenant: "ünï", Actor: "ü/😀", RecordIDs: []string{"", "a"}}},
		{"long field", &Entry{RecordID: strings.Repeat("x", 70000)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leaf := tc.e.Leaf()
			got, err := ParseLeaf(leaf)
			if err != nil {
				t.Fatalf("ParseLeaf: %v", err)
			}
			if !reflect.DeepEqual(got, tc.e) {
				t.Errorf("ParseLeaf(Leaf(e)) = %+v, want %+v", got, tc.e)
			}
			if !bytes.Equal(got.Leaf(), leaf) {
				t.Errorf("Leaf(ParseLeaf(b)) != b")
			}
			if !bytes.HasPrefix(leaf, tc.e.SignedBytes()) {
				t.Errorf("Leaf does not start with SignedBytes")
			}
		})
	}
}

func TestEntryTime(t *testing.T) {
	loc := time.FixedZone("UTC+5", 5*3600)
	when := time.Date(2030, 1, 2, 3, 4, 5, 6, loc)
	e := &Entry{Time: when}
	got, err := ParseLeaf(e.Leaf())
	if err != nil {
		t.Fatal(err)
	}
	if !got.Time.Equal(when) || got.Time.Location() != time.UTC || got.Time.Nanosecond() != 6 {
		t.Errorf("time = %v, want %v in UTC with nanoseconds", got.Time, when)
	}
	// A monotonic clock reading must not leak into the encoding.
	now := time.Now()
	if a, b := (&Entry{Time: now}).Leaf(), (&Entry{Time: now.Round(0)}).Leaf(); !bytes.Equal(a, b) {
		t.Error("monotonic reading changes the encoding")
	}
}

func TestEntryEmptyEqualsNil(t *testing.T) {
	a := &Entry{}
	b := &Entry{RecordIDs: []string{}, BodyHash: []byte{}, Details: map[string]string{}, Signature: []byte{}}
	if !bytes.Equal(a.Leaf(), b.Leaf()) {
		t.Error("empty and nil collections encode differently")
	}
}

func TestEntryDetailsOrder(t *testing.T) {
	e := &Entry{Details: map[string]string{}}
	for _, k := range strings.Fields("q w e r t y u i o p a s d f g h j k l z x c v b n m") {
		e.Details[k] = strings.ToUpper(k)
	}
	want := e.Leaf()
	for range 50 {
		if !bytes.Equal(e.Leaf(), want) {
			t.Fatal("encoding depends on map iteration order")
		}
	}
}

// TestEntryGolden pins the version 1 encoding. Leaves are stored forever:
// if this test fails, the change breaks every existing log.
func TestEntryGolden(t *testing.T) {
	e := &Entry{
		Tenant:     "t",
		RecordID:   "r",
		RecordIDs:  []string{"a"},
		Transition: "admit",
		NewState:   "active",
		BodyHash:   []byte{0xaa, 0xbb},
		Actor:      "t/u",
		Time:       time.Unix(1, 2).UTC(),
		Details:    map[string]string{"k": "v"},
		KeyID:      "id",
		Signature:  []byte{0x01},
	}
	const want = "637573746f64792d656e74727900" + // "custody-entry\x00"
		"01" + // version
		"0174" + "0172" + // tenant "t", record id "r"
		"01" + "0161" + // one record id, "a"
		"0561646d6974" + "00" + "06616374697665" + // "admit", "", "active"
		"02aabb" + // body hash
		"00" + "03742f75" + // policy version "", actor "t/u"
		"0000000000000001" + "00000002" + // 1 s, 2 ns
		"01" + "016b" + "0176" + // one detail, "k" => "v"
		"026964" + // key id "id"
		"0101" // signature
	if got := hex.EncodeToString(e.Leaf()); got != want {
		t.Errorf("Leaf() =\n%s\nwant\n%s", got, want)
	}
}

func TestParseLeafRejects(t *testing.T) {
	valid := sampleEntry().Leaf()
	magic := []byte(entryMagic)
	// minimal builds a leaf by hand from raw pieces after magic+version.
	build := func(version byte, rest ...[]byte) []byte {
		b := append(bytes.Clone(magic), version)
		for _, p := range rest {
			b = append(b, p...)
		}
		return b
	}
	zeroTime := make([]byte, 12)
	empty := []byte{0}
	// Fields before the time: tenant, record id, record ids count, transition,
	// prev, new, body hash, policy version, actor.
	pre := bytes.Repeat(empty, 9)
	nanos := binary.BigEndian.AppendUint32(make([]byte, 8), 1e9)
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"magic only", magic},
		{"wrong magic", append([]byte("custody-entrx\x00"), valid[len(magic):]...)},
		{"version 0", build(0, pre, zeroTime, empty, empty, empty)},
		{"version 2", build(2, pre, zeroTime, empty, empty, empty)},
		{"trailing byte", append(bytes.Clone(valid), 0)},
		{"truncated", valid[:len(valid)-1]},
		{"non-minimal varint", build(1, []byte{0x80, 0x00}, bytes.Repeat(empty, 8), zeroTime, empty, empty, empty)},
		{"non-minimal version", append(append(bytes.Clone(magic), 0x81, 0x00), bytes.Repeat(empty, 9)...)},
		{"length past end", build(1, []byte{0x7f, 'a'})},
		{"huge count", build(1, empty, empty, []byte{0xff, 0xff, 0xff, 0xff, 0x0f})},
		{"varint overflow", build(1, bytes.Repeat([]byte{0xff}, 11))},
		{"nanoseconds out of range", build(1, pre, nanos, empty, empty, empty)},
		{"details unsorted", build(1, pre, zeroTime, []byte{2, 1, 'b', 0, 1, 'a', 0}, empty, empty)},
		{"details duplicate", build(1, pre, zeroTime, []byte{2, 1, 'a', 0, 1, 'a', 0}, empty, empty)},
		{"missing signature", build(1, pre, zeroTime, empty, empty)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := ParseLeaf(tc.b)
			if !errors.Is(err, ErrMalformedLeaf) {
				t.Fatalf("ParseLeaf = %+v, %v; want ErrMalformedLeaf", e, err)
			}
		})
	}
	// Sanity: the hand-built valid form parses.
	if _, err := ParseLeaf(build(1, pre, zeroTime, []byte{2, 1, 'a', 0, 1, 'b', 0}, empty, empty)); err != nil {
		t.Fatalf("hand-built leaf: %v", err)
	}
}

// TestParseLeafMutations checks that no single-byte change, insertion,
// deletion or truncation of a valid leaf parses to an entry that encodes
// differently from the mutated input.
func TestParseLeafMutations(t *testing.T) {
	e := sampleEntry()
	e.Sign(testKey(2))
	valid := e.Leaf()
	check := func(what string, b []byte) {
		t.Helper()
		got, err := ParseLeaf(b)
		if err == nil && !bytes.Equal(got.Leaf(), b) {
			t.Fatalf("%s: accepted a non-canonical leaf", what)
		}
		if err != nil && !errors.Is(err, ErrMalformedLeaf) {
			t.Fatalf("%s: error %v does not wrap ErrMalformedLeaf", what, err)
		}
	}
	for i := range valid {
		for _, x := range []byte{0x01, 0x80, 0xff} {
			b := bytes.Clone(valid)
			b[i] ^= x
			check("flip", b)
		}
		check("delete", append(bytes.Clone(valid[:i]), valid[i+1:]...))
		check("insert", append(append(bytes.Clone(valid[:i]), 0x00), valid[i:]...))
		check("truncate", valid[:i])
	}
}

func TestEntrySignVerify(t *testing.T) {
	priv := testKey(3)
	pub := priv.Public().(ed25519.PublicKey)
	e := sampleEntry()
	e.Sign(priv)
	if got, want := e.KeyID, KeyID(pub); got != want {
		t.Fatalf("KeyID = %q, want %q", got, want)
	}
	if got, want := len(e.KeyID), 16; got != want {
		t.Fatalf("len(KeyID) = %d, want %d", got, want)
	}
	if err := e.Verify(pub); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	other := testKey(4).Public().(ed25519.PublicKey)
	if err := e.Verify(other); !errors.Is(err, ErrBadSignature) {
		t.Errorf("Verify with another key = %v, want ErrBadSignature", err)
	}
	if err := e.Verify(pub[:10]); !errors.Is(err, ErrBadSignature) {
		t.Errorf("Verify with a short key = %v, want ErrBadSignature", err)
	}
	unsigned := sampleEntry()
	if err := unsigned.Verify(pub); !errors.Is(err, ErrBadSignature) {
		t.Errorf("Verify of unsigned entry = %v, want ErrBadSignature", err)
	}

	// Changing any field after signing breaks the signature.
	mutations := map[string]func(*Entry){
		"tenant":     func(e *Entry) { e.Tenant += "x" },
		"record id":  func(e *Entry) { e.RecordID = "" },
		"record ids": func(e *Entry) { e.RecordIDs = e.RecordIDs[:1] },
		"transition": func(e *Entry) { e.Transition = "admit" },
		"prev state": func(e *Entry) { e.PrevState = "x" },
		"new state":  func(e *Entry) { e.NewState = "x" },
		"body hash":  func(e *Entry) { e.BodyHash[0] ^= 1 },
		"policy":     func(e *Entry) { e.PolicyVersion = "v8" },
		"actor":      func(e *Entry) { e.Actor = "acme/mallory" },
		"time":       func(e *Entry) { e.Time = e.Time.Add(time.Nanosecond) },
		"details":    func(e *Entry) { e.Details["reason"] = "fine" },
		"new detail": func(e *Entry) { e.Details["extra"] = "" },
		"key id":     func(e *Entry) { e.KeyID = KeyID(other) },
		"signature":  func(e *Entry) { e.Signature[10] ^= 1 },
	}
	for name, mutate := range mutations {
		t.Run(name, func(t *testing.T) {
			c, err := ParseLeaf(e.Leaf()) // deep copy
			if err != nil {
				t.Fatal(err)
			}
			mutate(c)
			if err := c.Verify(pub); !errors.Is(err, ErrBadSignature) {
				t.Errorf("Verify after changing %s = %v, want ErrBadSignature", name, err)
			}
		})
	}

	// Flipping any bit of the leaf either makes it unparseable or breaks
	// the signature.
	leaf := e.Leaf()
	for i := range leaf {
		b := bytes.Clone(leaf)
		b[i] ^= 0x04
		c, err := ParseLeaf(b)
		if err != nil {
			continue
		}
		if err := c.Verify(pub); err == nil {
			t.Fatalf("leaf with byte %d flipped still verifies", i)
		}
	}
}

func TestEntrySignPanicsOnBadKey(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Sign with a short key did not panic")
		}
	}()
	(&Entry{}).Sign(ed25519.PrivateKey{1, 2, 3})
}

func TestKeyIDKnownAnswer(t *testing.T) {
	pub := testKey(0).Public().(ed25519.PublicKey)
	sum := sha256.Sum256(pub)
	if got, want := KeyID(pub), hex.EncodeToString(sum[:8]); got != want {
		t.Errorf("KeyID = %s, want %s", got, want)
	}
}

func TestEntryRoundTripProperty(t *testing.T) {
	str := rapid.String()
	rapid.Check(t, func(t *rapid.T) {
		e := &Entry{
			Tenant:        str.Draw(t, "tenant"),
			RecordID:      str.Draw(t, "record"),
			RecordIDs:     rapid.SliceOf(str).Draw(t, "records"),
			Transition:    str.Draw(t, "transition"),
			PrevState:     str.Draw(t, "prev"),
			NewState:      str.Draw(t, "new"),
			BodyHash:      rapid.SliceOf(rapid.Byte()).Draw(t, "body"),
			PolicyVersion: str.Draw(t, "policy"),
			Actor:         str.Draw(t, "actor"),
			Time: time.Unix(rapid.Int64Range(-1<<40, 1<<40).Draw(t, "sec"),
				rapid.Int64Range(0, 999999999).Draw(t, "nsec")).UTC(),
			Details:   rapid.MapOf(str, str).Draw(t, "details"),
			KeyID:     str.Draw(t, "keyid"),
			Signature: rapid.SliceOf(rapid.Byte()).Draw(t, "sig"),
		}
		leaf := e.Leaf()
		got, err := ParseLeaf(leaf)
		if err != nil {
			t.Fatalf("ParseLeaf: %v", err)
		}
		if !bytes.Equal(got.Leaf(), leaf) {
			t.Fatal("re-encoding differs")
		}
		if !got.Time.Equal(e.Time) || got.Tenant != e.Tenant || len(got.Details) != len(e.Details) {
			t.Fatal("fields differ")
		}
	})
}

func FuzzParseLeaf(f *testing.F) {
	signed := sampleEntry()
	signed.Sign(testKey(5))
	for _, e := range []*Entry{{}, sampleEntry(), signed, {Details: map[string]string{"a": "b", "c": ""}}} {
		f.Add(e.Leaf())
	}
	f.Add([]byte(entryMagic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := ParseLeaf(b)
		if err != nil {
			if !errors.Is(err, ErrMalformedLeaf) {
				t.Fatalf("error %v does not wrap ErrMalformedLeaf", err)
			}
			return
		}
		if got := e.Leaf(); !bytes.Equal(got, b) {
			t.Fatalf("accepted input does not round-trip:\n in  %x\n out %x", b, got)
		}
	})
}

// SignLeaf signs as Sign does and returns the leaf Leaf returns.
func TestSignLeafIsSignThenLeaf(t *testing.T) {
	pub, priv, err := GeneratePrincipalKey()
	if err != nil {
		t.Fatal(err)
	}
	e := Entry{Tenant: "acme", RecordID: "r1", Transition: "admission", NewState: "admitted", Actor: "acme/alice",
		Time: time.Unix(1700000000, 5), Details: map[string]string{"reason": "ok", "b": "2"}}
	f := e
	leaf := e.SignLeaf(priv)
	f.Sign(priv)
	if !bytes.Equal(leaf, f.Leaf()) || !bytes.Equal(leaf, e.Leaf()) || e.KeyID != f.KeyID {
		t.Fatalf("SignLeaf gave %x (key %s); Sign then Leaf %x (key %s)", leaf, e.KeyID, f.Leaf(), f.KeyID)
	}
	if err := e.Verify(pub); err != nil {
		t.Fatalf("an entry SignLeaf signed does not verify: %v", err)
	}
}
