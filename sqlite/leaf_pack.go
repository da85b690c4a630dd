package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"fmt"
	"log/slog"
	"slices"
	"time"

	msqlite "modernc.org/sqlite"
)

// Packed leaves (schema 26).
//
// A log leaf is the signed entry, and most of an entry is the same from
// one record to the next: the magic, the names of its detail keys and the
// usual values of a class, a channel or an audience; its digests are
// lowercase hex, two bytes for each byte they hold. Stored as signed it
// was 612 bytes a record, the store's largest table. The store keeps a
// leaf packed, about half the size, and reading gives back the signed
// bytes exactly, so verify, proofs, tiles and exports see the leaf as it
// was signed.
//
// A packed leaf is 0x00 0x01 (a zero byte no entry starts with, then the
// number of the phrase list below), then tokens:
//
//	0x00–0x5F  n+1 bytes as they are (1 to 96)
//	0x60–0x7F  n-0x5F bytes that are the value of 2(n-0x5F) lowercase
//	           hex digits (2 to 64 digits)
//	0x80–0xFF  phrase n-0x80 of leafPhrases
//
// Only leaves that start as an entry does are packed. Stored bytes that
// start 0x00 0x01 but do not unpack to an entry read as they are, so a
// damaged row reads as a leaf that does not hash into the tree, which
// verify reports, as it does a damaged unpacked leaf. (DEFLATE with a
// preset dictionary packed slightly larger, and its compressor clears
// 640 KB of tables for each leaf: sequential writes were measurably
// slower.) Packing reads nothing of the database: a write decided ahead
// (custody's prepare.go) packs its leaf on the caller's goroutine with
// PackLeaf, beside its signature.

// packedLeaf starts a packed leaf.
var packedLeaf = []byte{0x00, 0x01}

// entryPrefix starts every entry (tlog's encoding, version 1).
const entryPrefix = "custody-entry\x00\x01"

// lp is s with its length before it, as an entry encodes a string.
func lp(s string) string { return string(rune(len(s))) + s }

// leafPhrases is phrase list 1 of packed leaves: at most 128 phrases of
// what entries hold, most of them a detail's key and its usual value,
// each as an entry encodes it. It is part of the stored format, so it
// never changes (TestPackedLeafKnownAnswer holds it): a longer or better
// list would be list 2.
var leafPhrases = []string{
	entryPrefix,
	// no record ids, a transition and the states around it
	"\x00" + lp("admission") + "\x00" + lp("admitted"), "\x00" + lp("admission") + "\x00" + lp("quarantined"),
	"\x00" + lp("admission") + "\x00" + lp("pending"), "\x00" + lp("admission") + "\x00" + lp("pending_confirmation"),
	"\x00" + lp("admission") + "\x00" + lp("rejected"),
	lp("admission"), lp("reevaluate"), lp("rebuild"), lp("approve"), lp("reject"), lp("confirm"), lp("quarantine"),
	lp("retire"), lp("erase"), lp("expire"), lp("restore"), lp("suspend"), lp("gate"), lp("confirm_action"),
	lp("session"), lp("observation"), lp("erasure"), lp("principal"), lp("principal_update"), lp("endorse"),
	lp("admitted"), lp("quarantined"), lp("pending"), lp("pending_confirmation"), lp("rejected"), lp("retired"),
	lp("suspended"), lp("allow"), lp("deny"),
	// a record transition's details, with their usual values
	lp("audience") + lp("owner"), lp("audience") + lp("tenant"), lp("audience"),
	lp("authority") + lp("user"), lp("authority") + lp("confirmed"), lp("authority") + lp("external"), lp("authority") + lp("agent"),
	lp("authority"),
	lp("channel") + lp("user"), lp("channel") + lp("agent"), lp("channel"),
	lp("class") + lp("fact"), lp("class") + lp("episode"), lp("class") + lp("preference"), lp("class") + lp("instruction"),
	lp("class"),
	lp("created_at") + "\x14", lp("created_at") + "\x1e", lp("created_at"),
	lp("erased") + lp("false"), lp("erased") + lp("true"),
	lp("expires_at") + lp(""), lp("expires_at") + "\x14", lp("expires_at") + "\x1e", lp("expires_at"),
	lp("inputs_sha256") + "\x40", lp("metadata") + "\x40",
	lp("key") + lp(""), lp("key"), lp("namespace"), lp("owner"),
	lp("parents") + lp(""), lp("parents"),
	lp("reason") + lp("admitted by [user-channel]"), lp("reason") + "\x1aadmitted by [", lp("reason"),
	lp("rules") + lp("user-channel"), lp("rules") + lp("no-permit"), lp("rules"),
	lp("session") + lp(""), lp("source_ref") + lp(""), lp("source_ref"),
	lp("version") + lp("1"), lp("version"), lp("writer"), lp("cause"), lp("error"),
	// other entries' details
	lp("subject"), lp("action"), lp("args_sha256") + "\x40", lp("risk"), lp("required"), lp("observed"),
	lp("justification"), lp("reasons"), lp("opener"), lp("text_commitment") + "\x40", lp("endorsement"),
	lp("actions"), lp("until"), lp("policy_sha256") + "\x40", lp("erased"), lp("already_erased"), lp("by"),
	lp("name"), lp("roles"), lp("channels"), lp("groups"), lp("public_key") + "\x40", lp("token_digest") + "\x40",
	lp("sealed_key_digest") + "\x40", lp("restored"), lp("status"), lp("pause"), lp("resumed_at"),
	lp("resumed_by"),
	// values
	lp("user"), lp("agent"), lp("false"), lp("true"), lp("owner"), lp("tenant"), lp("server"),
	// the string lengths of a body hash, a digest in hex and a key id
	"\x00\x00\x00\x00",
}

// phrasesBy lists, by first byte, the phrases that start with it, longest
// first.
var phrasesBy = func() (by [256][]uint8) {
	if len(leafPhrases) > 128 {
		panic("more than 128 leaf phrases")
	}
	for i, p := range leafPhrases {
		by[p[0]] = append(by[p[0]], uint8(i))
	}
	for _, l := range by {
		slices.SortStableFunc(l, func(a, b uint8) int { return len(leafPhrases[b]) - len(leafPhrases[a]) })
	}
	return by
}()

// Token ranges of a packed leaf.
const (
	litMax  = 0x5F // a literal run: token+1 bytes
	hexBase = 0x60 // a hex run: token-hexBase+1 bytes, twice as many digits
	hexMax  = 0x7F
	phrase0 = 0x80 // a phrase: leafPhrases[token-phrase0]
)

// minHex is the fewest hex digits packed as a hex run: a shorter run
// saves less than its token costs beside the literals around it.
const minHex = 8

func isHex(c byte) bool { return c-'0' < 10 || c-'a' < 6 }

// packLeaf is leaf as stored packed; nil if it is not an entry, or
// packing does not make it smaller.
func packLeaf(leaf []byte) []byte {
	if !bytes.HasPrefix(leaf, []byte(entryPrefix)) {
		return nil
	}
	out := make([]byte, 0, len(leaf)/2+16)
	out = append(out, packedLeaf...)
	lit := -1 // where the pending literal run starts in leaf, if any
	flush := func(end int) {
		for lit >= 0 && lit < end {
			n := min(end-lit, litMax+1)
			out = append(out, byte(n-1))
			out = append(out, leaf[lit:lit+n]...)
			lit += n
		}
		lit = -1
	}
	for i := 0; i < len(leaf); {
		if p, ok := matchPhrase(leaf[i:]); ok {
			flush(i)
			out = append(out, byte(phrase0+int(p)))
			i += len(leafPhrases[p])
			continue
		}
		if n := hexRun(leaf[i:]); n >= minHex {
			flush(i)
			out = append(out, byte(hexBase+n/2-1))
			out, _ = hex.AppendDecode(out, leaf[i:i+n]) // lowercase hex digits: cannot fail
			i += n
			continue
		}
		if lit < 0 {
			lit = i
		}
		i++
	}
	flush(len(leaf))
	if len(out) >= len(leaf) {
		return nil
	}
	return out
}

// matchPhrase is the longest phrase b starts with.
func matchPhrase(b []byte) (uint8, bool) {
	for _, p := range phrasesBy[b[0]] {
		if bytes.HasPrefix(b, []byte(leafPhrases[p])) {
			return p, true
		}
	}
	return 0, false
}

// hexRun is how many lowercase hex digits b starts with, even and at most
// 64.
func hexRun(b []byte) int {
	n := 0
	for n < len(b) && n < 64 && isHex(b[n]) {
		n++
	}
	return n &^ 1
}

// unpackLeaf is the leaf stored as data (data itself if it is not packed,
// or does not unpack to an entry).
func unpackLeaf(data []byte) []byte {
	if !bytes.HasPrefix(data, packedLeaf) {
		return data
	}
	out := make([]byte, 0, 2*len(data)+64)
	for i := len(packedLeaf); i < len(data); {
		t := data[i]
		i++
		switch {
		case t <= litMax:
			n := int(t) + 1
			if i+n > len(data) {
				return data
			}
			out = append(out, data[i:i+n]...)
			i += n
		case t <= hexMax:
			n := int(t-hexBase) + 1
			if i+n > len(data) {
				return data
			}
			out = hex.AppendEncode(out, data[i:i+n])
			i += n
		default:
			p := int(t - phrase0)
			if p >= len(leafPhrases) {
				return data
			}
			out = append(out, leafPhrases[p]...)
		}
	}
	if !bytes.HasPrefix(out, []byte(entryPrefix)) {
		return data
	}
	return out
}

// storedLeaf is leaf as a row stores it: packed, or as it is if it does
// not pack.
func storedLeaf(leaf []byte) []byte {
	if p := packLeaf(leaf); p != nil {
		return p
	}
	return leaf
}

// PackLeaf is leaf as the store keeps it, for AppendPackedLeaf; it reads
// nothing of the database, so a caller computes it on its own goroutine.
func (s *Store) PackLeaf(leaf []byte) []byte { return storedLeaf(leaf) }

// SQL functions for migrations, tests and repairs: custody_leaf(data) is
// the leaf a stored row holds, custody_pack_leaf(leaf) the row that
// stores a leaf.
const (
	leafFunc     = "custody_leaf"
	packLeafFunc = "custody_pack_leaf"
)

func init() {
	blob := func(name string, f func([]byte) []byte) {
		msqlite.MustRegisterDeterministicScalarFunction(name, 1, func(_ *msqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
			switch v := args[0].(type) {
			case []byte:
				return f(v), nil
			case string: // a blob concatenated in SQL
				return f([]byte(v)), nil
			}
			return nil, fmt.Errorf("%s: want a blob, got %T", name, args[0])
		})
	}
	blob(leafFunc, unpackLeaf)
	blob(packLeafFunc, storedLeaf)
}

// packLeaves copies an older database's leaves, packed, into a log_leaves
// without rowid (schema 26). The old table's pages go to the free list,
// which the store's next writes fill before the file grows again.
func packLeaves(ctx context.Context, tx *sql.Tx) error {
	var rowid int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND name = 'log_leaves' AND sql NOT LIKE '%WITHOUT ROWID%'`).Scan(&rowid); err != nil || rowid == 0 {
		return err
	}
	start := time.Now()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE log_leaves_26 (
  tenant TEXT NOT NULL,
  idx    INTEGER NOT NULL,
  data   BLOB NOT NULL,
  PRIMARY KEY (tenant, idx)
) WITHOUT ROWID`); err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO log_leaves_26 (tenant, idx, data) SELECT tenant, idx, `+packLeafFunc+`(data) FROM log_leaves ORDER BY tenant, idx`)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DROP TABLE log_leaves; ALTER TABLE log_leaves_26 RENAME TO log_leaves`); err != nil {
		return err
	}
	n, _ := res.RowsAffected()
	slog.Info("sqlite: migrated to schema 26: the log's leaves are packed", "leaves", n, "took", time.Since(start).Round(time.Millisecond))
	return nil
}
