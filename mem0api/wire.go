package mem0api

import (
	"encoding/json"
	"strings"
	"time"

	custody "github.com/custody-mem/custody"
)

// The metadata of a Mem0 memory's record. Keys under "mem0." are marks
// custody's MCP tools refuse to set (custody.AdapterMarkPrefixes), so only
// these routes (or code with a token, over the HTTP API) write them.
const (
	metaMemory   = "mem0.memory"   // "1": the record is a Mem0 memory
	metaID       = "mem0.id"       // its Mem0 id
	metaUser     = "mem0.user_id"  // the entity ids Mem0 scopes by
	metaAgent    = "mem0.agent_id" //
	metaApp      = "mem0.app_id"   //
	metaRun      = "mem0.run_id"   //
	metaRole     = "mem0.role"     // the message's role
	metaMetadata = "mem0.metadata" // the caller's metadata, as JSON
	metaCreated  = "mem0.created"  // when the memory was added (an update keeps it)
	keyPrefix    = "mem0:"
)

// Provenance is custody's side of a memory: where it came from, how far it
// is trusted, and whether it is in force.
type Provenance struct {
	RecordID  string `json:"record_id"`
	Class     string `json:"class"`
	Channel   string `json:"channel"`
	Authority string `json:"authority"`
	Writer    string `json:"writer"`
	SourceRef string `json:"source_ref"`
	State     string `json:"state"`
	Reason    string `json:"reason,omitempty"`
	LogIndex  uint64 `json:"log_index"`
	Version   int    `json:"version"`
	// SupersededBy, in a history: the version that replaced this one.
	SupersededBy int `json:"superseded_by,omitempty"`
}

// Memory is a memory as Mem0's API shows it, with custody's provenance.
type Memory struct {
	ID             string          `json:"id"`
	Memory         string          `json:"memory"`
	UserID         string          `json:"user_id,omitempty"`
	AgentID        *string         `json:"agent_id"`
	AppID          *string         `json:"app_id"`
	RunID          *string         `json:"run_id"`
	Metadata       json.RawMessage `json:"metadata"`
	Categories     []string        `json:"categories"`
	CreatedAt      string          `json:"created_at"`
	UpdatedAt      string          `json:"updated_at"`
	ExpirationDate *string         `json:"expiration_date"`
	Score          *float64        `json:"score,omitempty"`
	Custody        Provenance      `json:"custody"`
}

func optional(m custody.Metadata, k string) *string {
	if v, ok := m[k]; ok {
		return &v
	}
	return nil
}

func provenance(r *custody.Record) Provenance {
	return Provenance{RecordID: r.ID, Class: string(r.Class), Channel: r.Channel, Authority: r.Authority.String(), Writer: r.Writer,
		SourceRef: r.SourceRef, State: string(r.State), LogIndex: r.LogIndex, Version: r.Version, SupersededBy: r.SupersededBy}
}

// memoryOf is the Mem0 memory of a record of these routes.
func memoryOf(r *custody.Record) Memory {
	m := Memory{
		ID: strings.TrimPrefix(r.Key, keyPrefix), Memory: r.Body, UserID: r.Metadata[metaUser],
		AgentID: optional(r.Metadata, metaAgent), AppID: optional(r.Metadata, metaApp), RunID: optional(r.Metadata, metaRun),
		Metadata: json.RawMessage("null"), Categories: []string{}, UpdatedAt: r.CreatedAt.UTC().Format(time.RFC3339Nano),
		Custody: provenance(r),
	}
	if raw := r.Metadata[metaMetadata]; raw != "" && json.Valid([]byte(raw)) {
		m.Metadata = json.RawMessage(raw)
	}
	m.CreatedAt = m.UpdatedAt
	if c := r.Metadata[metaCreated]; c != "" {
		m.CreatedAt = c
	}
	if r.ExpiresAt != nil {
		e := r.ExpiresAt.UTC().Format(time.RFC3339)
		m.ExpirationDate = &e
	}
	if r.Withheld {
		m.Memory = ""
	}
	return m
}
