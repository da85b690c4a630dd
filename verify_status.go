package custody

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"
)

// VerifyStatus is the outcome of the last run of custody verify on a
// store, kept in a file beside the checkpoint file (Options.VerifyStatusFile)
// so that the server, and the review console through it, can say when the
// store was last verified and what verify found. It is a report, not
// evidence: the evidence is the log, which verify checks again.
type VerifyStatus struct {
	At      time.Time `json:"at"`
	OK      bool      `json:"ok"`
	Entries uint64    `json:"entries"`
	Root    []byte    `json:"root,omitempty"`
	Problem string    `json:"problem,omitempty"` // the difference verify reported, or why it could not run
	// Logs is what verify found of each tenant's log (Entries and Root
	// are then of one log, in the status Of gives).
	Logs []LogReport `json:"logs,omitempty"`
}

// Of is the status as one tenant may see it: the outcome, and of the logs
// only its own (Entries and Root are its log's; another tenant's problem
// is not named). nil stays nil.
func (st *VerifyStatus) Of(tenant string) *VerifyStatus {
	if st == nil {
		return nil
	}
	out := VerifyStatus{At: st.At, OK: st.OK}
	for _, l := range st.Logs {
		if l.Tenant == tenant {
			out.Entries, out.Root, out.Logs = l.Entries, l.Root, []LogReport{l}
			out.Problem = l.Problem
		}
	}
	if !st.OK && out.Problem == "" {
		out.Problem = st.Problem // in the records or principals, as before one log per tenant
		for _, l := range st.Logs {
			if l.Problem != "" { // another tenant's log: not this tenant's to read
				out.Problem = "the store did not verify (its operator sees the difference with custody verify)"
			}
		}
	}
	return &out
}

// WriteVerifyStatus replaces the file at path with st, atomically.
func WriteVerifyStatus(path string, st VerifyStatus) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(path, append(b, '\n'))
}

// LastVerify reads Options.VerifyStatusFile: nil when no verify has
// recorded an outcome there (or no file is configured).
func (s *Service) LastVerify() (*VerifyStatus, error) {
	if s.opts.VerifyStatusFile == "" {
		return nil, nil
	}
	b, err := os.ReadFile(s.opts.VerifyStatusFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the verify status file: %w", err)
	}
	var st VerifyStatus
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("the verify status file %s is malformed (run custody verify again to replace it): %w", s.opts.VerifyStatusFile, err)
	}
	return &st, nil
}
