package httpapi

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"github.com/custody-mem/custody"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/custody-mem/custody/tlog"
)

// LogEntriesResponse is a range of the caller's tenant's audit log (each
// tenant's log is a tree of its own, indexed from 0). The entries the caller
// may read come with the exact leaf bytes and their decoded fields: those
// of records its subject owns or may retrieve (reviewers: the quarantined
// ones too), its subject's gate decisions, and policy changes; admins and
// auditors read every entry of their tenant. Every other entry, of the
// tenant or another, comes redacted, with its index and leaf hash only:
// enough to check inclusion and consistency, nothing about the record.
type LogEntriesResponse struct {
	Entries []LogEntry `json:"entries"`
}

// LogEntry is one leaf of the Merkle log.
type LogEntry struct {
	Index         uint64            `json:"index"`
	LeafHash      string            `json:"leaf_hash" doc:"base64 of SHA-256(0x00 || leaf)"`
	Leaf          string            `json:"leaf,omitempty" doc:"base64 of the exact leaf bytes (entries the caller may read only)"`
	Tenant        string            `json:"tenant,omitempty"`
	RecordID      string            `json:"record_id,omitempty"`
	RecordIDs     []string          `json:"record_ids,omitempty"`
	Transition    string            `json:"transition,omitempty"`
	PrevState     string            `json:"prev_state,omitempty"`
	NewState      string            `json:"new_state,omitempty"`
	BodyHash      string            `json:"body_hash,omitempty" doc:"base64 of HMAC-SHA256(salt, body), the salt a per-record secret kept outside the log (records older than salts: SHA-256(body))"`
	PolicyVersion string            `json:"policy_version,omitempty"`
	Actor         string            `json:"actor,omitempty"`
	Time          *time.Time        `json:"time,omitempty"`
	Details       map[string]string `json:"details,omitempty"`
	KeyID         string            `json:"key_id,omitempty"`
	Signature     string            `json:"signature,omitempty" doc:"base64 Ed25519 signature by the acting principal's key"`
}

// Redacted reports whether e came without its leaf: an entry the caller may
// not read, of which only the index and leaf hash are shown.
func (e LogEntry) Redacted() bool { return e.Leaf == "" }

// Hash returns e's RFC 6962 leaf hash, the value to check an inclusion
// proof with, for a redacted entry and a full one alike. For a full entry
// it also checks that the leaf bytes hash to it.
func (e LogEntry) Hash() ([]byte, error) {
	h, err := base64.StdEncoding.DecodeString(e.LeafHash)
	if err != nil || len(h) != 32 {
		return nil, fmt.Errorf("log entry %d: leaf_hash %q is not a base64 SHA-256 hash", e.Index, e.LeafHash)
	}
	if e.Redacted() {
		return h, nil
	}
	leaf, err := base64.StdEncoding.DecodeString(e.Leaf)
	if err != nil {
		return nil, fmt.Errorf("log entry %d: leaf is not base64: %w", e.Index, err)
	}
	if !bytes.Equal(tlog.LeafHash(leaf), h) {
		return nil, fmt.Errorf("log entry %d: its leaf does not hash to its leaf_hash", e.Index)
	}
	return h, nil
}

// LogStatusResponse is what a reviewer or auditor looks at to know its
// tenant's log is in order: the signed checkpoint, the log's origin and
// the key that verifies it, and what the last custody verify on the store
// found of this log (null when none recorded one).
type LogStatusResponse struct {
	Checkpoint  string                `json:"checkpoint" doc:"the signed checkpoint, as GET /v1/log/checkpoint answers it"`
	Size        uint64                `json:"size"`
	Origin      string                `json:"origin" doc:"the origin of the tenant's log, the first line of its checkpoints"`
	VerifierKey string                `json:"verifier_key" doc:"the C2SP signed-note vkey of the checkpoints, as GET /v1/log/key?tenant= answers it"`
	LogPrefix   string                `json:"log_prefix" doc:"the path under which this server publishes the tenant's log as C2SP tlog-tiles (checkpoint, tile/…), /log/ and an ID that cannot be guessed from the tenant's name: hand the server's URL and this path, with the verifier key, to whoever should follow the log"`
	LastVerify  *custody.VerifyStatus `json:"last_verify" doc:"the outcome of the last custody verify run on this store, for this tenant's log, or null"`
}

func (s *Server) logStatus(w http.ResponseWriter, r *http.Request) error {
	c, err := s.queryCaller(r)
	if err != nil {
		return err
	}
	tenant := c.Tenant()
	note, err := s.svc.Checkpoint(r.Context(), tenant)
	if err != nil {
		return err
	}
	if note, err = s.withCosignatures(r.Context(), note); err != nil {
		return err
	}
	cp, err := s.svc.OpenCheckpoint(tenant, note)
	if err != nil {
		return err
	}
	vkey, err := s.svc.VerifierKey(tenant)
	if err != nil {
		return err
	}
	last, err := s.svc.LastVerify()
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, LogStatusResponse{Checkpoint: string(note), Size: cp.Size, Origin: cp.Origin, VerifierKey: vkey,
		LogPrefix: TilesPrefix + s.logIDs.ID(tenant), LastVerify: last.Of(tenant)})
	return nil
}

// InclusionProofResponse proves that leaf index is in the tree of size.
type InclusionProofResponse struct {
	Index  uint64   `json:"index"`
	Size   uint64   `json:"size"`
	Hashes []string `json:"hashes" doc:"base64 RFC 6962 proof hashes"`
}

// ConsistencyProofResponse proves that the tree of size from is a prefix of
// the tree of size to.
type ConsistencyProofResponse struct {
	From   uint64   `json:"from"`
	To     uint64   `json:"to"`
	Hashes []string `json:"hashes" doc:"base64 RFC 6962 proof hashes"`
}

func (s *Server) checkpoint(w http.ResponseWriter, r *http.Request) error {
	latest := false
	if v := r.URL.Query().Get("latest"); v != "" {
		var err error
		if latest, err = strconv.ParseBool(v); err != nil {
			return badRequest("invalid_input", "latest", fmt.Sprintf("latest=%q must be true or false", v))
		}
	}
	c, err := s.queryCaller(r)
	if err != nil {
		return err
	}
	var note []byte
	if s.gated() && !latest {
		note, err = s.currentCheckpoint(r.Context(), c.Tenant())
	} else if note, err = s.svc.Checkpoint(r.Context(), c.Tenant()); err == nil {
		note, err = s.withCosignatures(r.Context(), note)
	}
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(note)))
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	w.Write(note)
	return nil
}

// logKey answers the verifier key of the checkpoints of the log of
// ?tenant= as one line of text: the C2SP signed-note vkey
// (origin+keyhash+base64 key), which a client, monitor or witness pins to
// check checkpoints. It holds nothing secret, so it needs no token; it is
// answered for any well-formed tenant name, so it tells nothing of which
// tenants exist.
func (s *Server) logKey(w http.ResponseWriter, r *http.Request) error {
	tenant := r.URL.Query().Get("tenant")
	if tenant == "" {
		return badRequest("invalid", "tenant", "name the tenant whose log's key you want: /v1/log/key?tenant=NAME (each tenant's log has its own origin, which names its key)")
	}
	vkey, err := s.svc.VerifierKey(tenant)
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Cache-Control", "public, max-age=300")
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, vkey+"\n")
	return nil
}

func (s *Server) inclusionProof(w http.ResponseWriter, r *http.Request) error {
	c, err := s.queryCaller(r)
	if err != nil {
		return err
	}
	index, err := queryUint(r, "index")
	if err != nil {
		return err
	}
	size, err := queryUint(r, "size")
	if err != nil {
		return err
	}
	p, err := s.svc.InclusionProof(r.Context(), c.Tenant(), index, size)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, InclusionProofResponse{Index: index, Size: size, Hashes: b64s(p)})
	return nil
}

func (s *Server) consistencyProof(w http.ResponseWriter, r *http.Request) error {
	c, err := s.queryCaller(r)
	if err != nil {
		return err
	}
	from, err := queryUint(r, "from")
	if err != nil {
		return err
	}
	to, err := queryUint(r, "to")
	if err != nil {
		return err
	}
	p, err := s.svc.ConsistencyProof(r.Context(), c.Tenant(), from, to)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ConsistencyProofResponse{From: from, To: to, Hashes: b64s(p)})
	return nil
}

func (s *Server) logEntries(w http.ResponseWriter, r *http.Request) error {
	c, err := s.queryCaller(r)
	if err != nil {
		return err
	}
	start, err := queryUint(r, "start")
	if err != nil {
		return err
	}
	end, err := queryUint(r, "end")
	if err != nil {
		return err
	}
	views, err := s.svc.LogEntries(r.Context(), c, start, end)
	if err != nil {
		return err
	}
	out := LogEntriesResponse{Entries: make([]LogEntry, 0, len(views))}
	for _, v := range views {
		e := LogEntry{Index: v.Index, LeafHash: v.LeafHash, Leaf: v.Leaf}
		if d := v.Entry; d != nil {
			e.Tenant, e.RecordID, e.RecordIDs, e.Transition = d.Tenant, d.RecordID, d.RecordIDs, d.Transition
			e.PrevState, e.NewState, e.PolicyVersion, e.Actor = d.PrevState, d.NewState, d.PolicyVersion, d.Actor
			e.Details, e.KeyID = d.Details, d.KeyID
			if len(d.BodyHash) > 0 {
				e.BodyHash = base64.StdEncoding.EncodeToString(d.BodyHash)
			}
			if len(d.Signature) > 0 {
				e.Signature = base64.StdEncoding.EncodeToString(d.Signature)
			}
			if !d.Time.IsZero() {
				t := d.Time.UTC()
				e.Time = &t
			}
		}
		out.Entries = append(out.Entries, e)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func b64s(hs [][]byte) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = base64.StdEncoding.EncodeToString(h)
	}
	return out
}
