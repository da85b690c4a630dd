package mem0api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"

	custody "github.com/custody-mem/custody"
	"github.com/google/uuid"
)

// addRequest is Mem0's add body, and what custody adds to it: the channel
// the messages came on (default: the principal's user channel, else its
// agent channel) and the custody session they were read in.
type addRequest struct {
	Messages       []message       `json:"messages"`
	UserID         string          `json:"user_id"`
	AgentID        string          `json:"agent_id"`
	AppID          string          `json:"app_id"`
	RunID          string          `json:"run_id"`
	Metadata       json.RawMessage `json:"metadata"`
	Infer          *bool           `json:"infer"`
	ExpirationDate string          `json:"expiration_date"`
	Channel        string          `json:"channel"`
	Session        string          `json:"session"`
}

type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// AddResult is one message's outcome: Mem0's id and event (ADD, or NOOP
// for a message admission held), and custody's decision.
type AddResult struct {
	ID      string     `json:"id"`
	Event   string     `json:"event"`
	Memory  string     `json:"memory"`
	Custody Provenance `json:"custody"`
}

// AddResponse answers an add. custody decides at once: status is
// SUCCEEDED when every message was admitted, HELD when admission held one
// (see each result's custody.state); there is no event to poll.
type AddResponse struct {
	Results []AddResult `json:"results"`
	Message string      `json:"message"`
	Status  string      `json:"status"`
	EventID string      `json:"event_id"`
}

func (a *API) add(w http.ResponseWriter, r *http.Request) error {
	var req addRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if len(req.Messages) == 0 {
		return invalid("messages", "messages is empty; send [{\"role\": \"user\", \"content\": \"...\"}]")
	}
	if req.UserID == "" && req.AgentID == "" && req.AppID == "" && req.RunID == "" {
		return invalid("user_id", "name at least one of user_id, agent_id, app_id, run_id, as Mem0 asks")
	}
	c, err := a.caller(r, req.UserID)
	if err != nil {
		return err
	}
	channel, err := a.channel(c, req.Channel)
	if err != nil {
		return err
	}
	meta, err := writeMetadata(req.Metadata)
	if err != nil {
		return err
	}
	for k, v := range map[string]string{metaUser: c.Subject.Name, metaAgent: req.AgentID, metaApp: req.AppID, metaRun: req.RunID} {
		if v != "" {
			meta[k] = v
		}
	}
	expires, err := expiry(req.ExpirationDate)
	if err != nil {
		return err
	}
	infer := req.Infer == nil || *req.Infer
	cands := make([]custody.Candidate, len(req.Messages))
	for i, m := range req.Messages {
		var text string
		if err := json.Unmarshal(m.Content, &text); err != nil {
			return invalid(fmt.Sprintf("messages[%d].content", i), "custody stores text: content must be a string (an image is not stored)")
		}
		class := custody.ClassEpisode
		if infer && m.Role == "user" {
			class = custody.ClassFact // what Mem0 would infer from it, kept verbatim: admission decides it as a fact
		}
		id := uuid.NewString()
		cm := custody.Metadata{metaMemory: "1", metaID: id, metaRole: m.Role, metaCreated: time.Now().UTC().Format(time.RFC3339Nano)}
		for k, v := range meta {
			cm[k] = v
		}
		cands[i] = custody.Candidate{Namespace: a.opts.Namespace, Key: keyPrefix + id, Class: class, Body: text, Channel: channel,
			Session: req.Session, SourceRef: "mem0", ExpiresAt: expires, Metadata: cm}
	}
	ds, err := a.svc.RememberBatch(r.Context(), c, cands)
	if err != nil {
		return err
	}
	res := AddResponse{Results: make([]AddResult, len(ds)), Status: "SUCCEEDED", EventID: uuid.NewString()}
	held := 0
	for i, d := range ds {
		ar := AddResult{ID: cands[i].Metadata[metaID], Event: "ADD", Memory: cands[i].Body, Custody: Provenance{
			RecordID: d.ID, Class: string(cands[i].Class), Channel: channel, Authority: d.Authority.String(), Writer: c.Principal.ID(),
			SourceRef: "mem0", State: string(d.State), Reason: d.Reason, LogIndex: d.LogIndex, Version: 1,
		}}
		if d.State != custody.StateAdmitted {
			ar.Event, held = "NOOP", held+1
		}
		res.Results[i] = ar
	}
	res.Message = fmt.Sprintf("custody stored %d of %d messages as memories", len(ds)-held, len(ds))
	if held > 0 {
		res.Status = "HELD"
		res.Message += fmt.Sprintf("; admission held %d (see custody.state and custody.reason): they are not memories until a reviewer approves them", held)
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// channel is the channel of a write: the one asked, else the principal's
// user channel, else its agent channel. custody checks the principal holds it.
func (a *API) channel(c *custody.Caller, asked string) (string, error) {
	if asked != "" {
		return asked, nil
	}
	for _, ch := range []string{"user", "agent"} {
		if c.Principal.MayAssert(ch) {
			return ch, nil
		}
	}
	return "", invalid("channel", "name the channel the messages came on (\"channel\": \"tool:email\"); principal %s holds neither user nor agent", c.Principal.ID())
}

// maxMirrored is how many of the caller's metadata keys are kept as custody
// metadata keys too: with the routes' own marks, custody's 16.
const maxMirrored = 6

// writeMetadata is the custody metadata of Mem0 metadata: the whole of it
// as JSON under mem0.metadata, and each string value whose key custody
// can keep also under that key, so that filters on it apply in the query.
func writeMetadata(raw json.RawMessage) (custody.Metadata, error) {
	m := custody.Metadata{}
	if len(raw) == 0 || string(raw) == "null" {
		return m, nil
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, invalid("metadata", "metadata must be a JSON object")
	}
	compact, _ := json.Marshal(obj)
	if len(compact) > custody.MaxMetadataValueBytes {
		return nil, invalid("metadata", "metadata is %d bytes as JSON; custody keeps at most %d: keep less in it", len(compact), custody.MaxMetadataValueBytes)
	}
	m[metaMetadata] = string(compact)
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if s, ok := obj[k].(string); ok && mirrorable(k) && len(m) <= maxMirrored {
			m[k] = s
		}
	}
	return m, nil
}

func expiry(s string) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		d, derr := time.Parse("2006-01-02", s)
		if derr != nil {
			return nil, invalid("expiration_date", "expiration_date %q is not a date (2027-01-31) or an RFC 3339 time", s)
		}
		t = d
	}
	return &t, nil
}
