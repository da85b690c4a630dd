package custody

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/custody-mem/custody/tlog"
)

// SnapshotVersion is the format version of export files.
const SnapshotVersion = 1

// Snapshot is a signed export of one tenant: its principals (with their
// token hashes and sealed keys, so tokens keep working after a restore on
// the same server key), every record in every state with its lineage, the
// registry of retired and rejected ids, and the checkpoint it was taken at.
type Snapshot struct {
	Version    int                 `json:"version"`
	Tenant     string              `json:"tenant"`
	Origin     string              `json:"origin"`
	TakenAt    time.Time           `json:"taken_at"`
	Checkpoint string              `json:"checkpoint"`
	Principals []SnapshotPrincipal `json:"principals"`
	Records    []*Record           `json:"records"`
	Registry   []RegistryEntry     `json:"registry"`
	Salts      map[string][]byte   `json:"salts,omitempty"` // record id → body salt (Record.Salt is never marshalled)
}

// SnapshotPrincipal is a principal as exported.
type SnapshotPrincipal struct {
	Principal
	TokenHash []byte `json:"token_hash"`
	SealedKey []byte `json:"sealed_key"`
}

// RegistryEntry is a retired or rejected id.
type RegistryEntry struct {
	ID    string `json:"id"`
	State State  `json:"state"`
}

// signedSnapshot is the file: the snapshot's exact bytes and the server's
// Ed25519 signature over them.
type signedSnapshot struct {
	Snapshot  json.RawMessage `json:"snapshot"`
	Signature []byte          `json:"signature"`
}

// Export writes a signed snapshot of a tenant to w.
func (s *Service) Export(ctx context.Context, tenant string, w io.Writer) (*Snapshot, error) {
	return s.ExportProgress(ctx, tenant, w, nil)
}

// ExportProgress is Export telling progress, if set, how many of the
// tenant's records it has read (export_progress.go).
func (s *Service) ExportProgress(ctx context.Context, tenant string, w io.Writer, progress func(done, total uint64)) (*Snapshot, error) {
	if err := ValidName("tenant", tenant); err != nil {
		return nil, err
	}
	cp, err := s.Checkpoint(ctx, tenant)
	if err != nil {
		return nil, err
	}
	snap := &Snapshot{Version: SnapshotVersion, Tenant: tenant, Origin: s.LogOrigin(tenant), TakenAt: s.now(), Checkpoint: string(cp),
		Principals: []SnapshotPrincipal{}, Records: []*Record{}, Registry: []RegistryEntry{}}
	err = s.store.View(ctx, func(tx Tx) error {
		ps, err := tx.Principals(ctx, tenant)
		if err != nil {
			return err
		}
		if len(ps) == 0 {
			return notFound("tenant " + tenant)
		}
		for _, p := range ps {
			th, err := tx.TokenHash(ctx, p.Tenant, p.Name)
			if err != nil {
				return err
			}
			sk, err := tx.SealedKey(ctx, p.Tenant, p.Name)
			if err != nil {
				return err
			}
			snap.Principals = append(snap.Principals, SnapshotPrincipal{Principal: *p, TokenHash: th, SealedKey: sk})
		}
		tell, err := exportProgress(ctx, tx, tenant, progress)
		if err != nil {
			return err
		}
		return tx.ScanRecords(ctx, tenant, func(r *Record) error {
			snap.Records = append(snap.Records, r)
			tell(uint64(len(snap.Records)))
			snap.addSalt(r)
			if r.State.Terminal() {
				snap.Registry = append(snap.Registry, RegistryEntry{ID: r.ID, State: r.State})
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(snap)
	if err != nil {
		return nil, err
	}
	out, err := json.Marshal(signedSnapshot{Snapshot: body, Signature: ed25519.Sign(s.key.SigningKey(), body)})
	if err != nil {
		return nil, err
	}
	_, err = w.Write(append(out, '\n'))
	return snap, err
}

// RestoreReport says what a restore did.
type RestoreReport struct {
	Tenant     string   `json:"tenant"`
	Principals int      `json:"principals"`
	Restored   int      `json:"restored"`
	Skipped    int      `json:"skipped"`  // already in the store
	Withheld   []string `json:"withheld"` // ids restored but kept ineligible by the registry
}

// ErrBadSnapshot means a snapshot was tampered with, is foreign (signed by
// another server key or for another log), or is malformed.
var ErrBadSnapshot = errors.New("bad snapshot")

func badSnapshot(format string, args ...any) error {
	return &Error{Kind: ErrBadSnapshot, Msg: "snapshot refused: " + fmt.Sprintf(format, args...)}
}

// OpenSnapshot checks a snapshot's signature and checkpoint and decodes it.
func (s *Service) OpenSnapshot(data []byte) (*Snapshot, error) {
	var ss signedSnapshot
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ss); err != nil {
		return nil, badSnapshot("not a custody snapshot (%v)", err)
	}
	if !ed25519.Verify(s.key.PublicKey(), ss.Snapshot, ss.Signature) {
		return nil, badSnapshot("its signature does not verify under this server's key: it was altered, or exported by another server")
	}
	var snap Snapshot
	dec = json.NewDecoder(bytes.NewReader(ss.Snapshot))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&snap); err != nil {
		return nil, badSnapshot("malformed contents (%v)", err)
	}
	if snap.Version != SnapshotVersion {
		return nil, badSnapshot("format version %d; this server reads %d", snap.Version, SnapshotVersion)
	}
	if err := s.snapshotOrigin(&snap); err != nil {
		return nil, err
	}
	return &snap, nil
}

// Restore loads a snapshot. Records already in the store are left as the
// store has them. A record that the registry beside the server key
// (Options.RegistryFile), the store's tombstones or the snapshot's own
// registry name as retired or rejected is restored in that state, one
// the snapshot holds as suspended stays suspended, and a descendant of a
// record that will not be admitted is restored suspended (holdDescendants):
// none becomes eligible. Every restored
// principal and record is a log entry. progress, if set, is told the count.
func (s *Service) Restore(ctx context.Context, data []byte, progress func(done, total uint64)) (*RestoreReport, error) {
	snap, err := s.OpenSnapshot(data)
	if err != nil {
		return nil, err
	}
	rep := &RestoreReport{Tenant: snap.Tenant, Withheld: []string{}}
	registry, err := s.registry.load()
	if err != nil {
		return nil, err
	}
	erased, err := s.registry.erased()
	if err != nil {
		return nil, err
	}
	revoked, err := s.registry.revoked()
	if err != nil {
		return nil, err
	}
	for _, e := range snap.Registry {
		if _, ok := registry[snap.Tenant+"\x00"+e.ID]; !ok {
			registry[snap.Tenant+"\x00"+e.ID] = e.State
		}
	}
	err = s.update(ctx, func(tx Tx) error {
		if err := s.holdDescendants(ctx, tx, snap, registry); err != nil {
			return err
		}
		for _, p := range snap.Principals {
			if p.Tenant != snap.Tenant {
				return badSnapshot("principal %s is not of tenant %s", p.ID(), snap.Tenant)
			}
			if _, err := tx.Principal(ctx, p.Tenant, p.Name); err == nil {
				continue
			} else if !errors.Is(err, ErrNotFound) {
				return err
			}
			pp := p.Principal
			tokenHash, sealed, transition := p.TokenHash, p.SealedKey, TransitionPrincipal
			if revoked[pp.ID()] { // revoked after the snapshot was taken: it stays revoked
				_, tokenHash = NewToken()
				sealed, transition = []byte{}, TransitionPrincipalRevoke
			}
			if err := tx.InsertPrincipal(ctx, &pp, tokenHash, sealed); err != nil {
				return err
			}
			details := map[string]string{"name": pp.Name, "roles": strings.Join(pp.Roles, ","), "channels": strings.Join(pp.Channels, ","),
				"groups": strings.Join(pp.Groups, ","), "public_key": fmt.Sprintf("%x", []byte(pp.PublicKey)), "restored": "true"}
			if transition == TransitionPrincipalRevoke {
				details[detailStatus] = PrincipalRevoked
			}
			if _, err := s.appendServer(ctx, tx, &tlog.Entry{Tenant: pp.Tenant, Transition: transition, Details: details}); err != nil {
				return err
			}
			rep.Principals++
		}
		for i, r := range snap.Records {
			if progress != nil && i%1000 == 0 {
				progress(uint64(i), uint64(len(snap.Records)))
			}
			r.Salt = snap.Salts[r.ID]
			if erased[snap.Tenant+"\x00"+r.ID] || r.Erased {
				r.Body, r.Salt, r.Metadata, r.Erased = "", nil, nil, true // erased after the snapshot was taken: its body stays gone
			}
			if err := s.restoreRecord(ctx, tx, snap, r, registry, rep); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rep, nil
}

func (s *Service) restoreRecord(ctx context.Context, tx Tx, snap *Snapshot, r *Record, registry map[string]State, rep *RestoreReport) error {
	if r.Tenant != "" && r.Tenant != snap.Tenant {
		return badSnapshot("record %s is not of tenant %s", r.ID, snap.Tenant)
	}
	r.Tenant = snap.Tenant
	if !validID(r.ID) {
		return badSnapshot("record id %q is malformed", r.ID)
	}
	if _, err := tx.Record(ctx, r.Tenant, r.ID); err == nil {
		rep.Skipped++
		return nil
	} else if !errors.Is(err, ErrNotFound) {
		return err
	}
	prev := r.State
	if st, ok := registry[r.Tenant+"\x00"+r.ID]; ok {
		r.State = st
	}
	if dead, err := tx.Tombstoned(ctx, r.Tenant, r.ID); err != nil {
		return err
	} else if dead && !r.State.Terminal() {
		r.State = StateRetired
	}
	if r.State != prev || (r.State != StateAdmitted && prev == StateAdmitted) {
		rep.Withheld = append(rep.Withheld, r.ID)
	}
	actorTenant, actorName, _ := strings.Cut(r.Writer, "/")
	if _, err := tx.Principal(ctx, actorTenant, actorName); err != nil {
		return badSnapshot("record %s: writer %s is not a principal of the snapshot or the store", r.ID, r.Writer)
	}
	rc := r.Receipt
	if rc == nil {
		rc = &Receipt{Decision: r.State, PolicyVersion: r.PolicyVersion}
	}
	rc.Reason = "restored from a snapshot taken at " + snap.TakenAt.Format(time.RFC3339) + "; " + rc.Reason
	want := r.State
	r.State = ""
	if err := s.transition(ctx, tx, nil, r, "restore", want, rc); err != nil {
		return err
	}
	if err := tx.InsertRecord(ctx, r); err != nil {
		return err
	}
	rep.Restored++
	return nil
}

// addSalt carries r's body salt in the snapshot, beside its body, so that
// the restored record commits to its body as the exported one did.
func (snap *Snapshot) addSalt(r *Record) {
	if len(r.Salt) == 0 {
		return
	}
	if snap.Salts == nil {
		snap.Salts = map[string][]byte{}
	}
	snap.Salts[r.ID] = r.Salt
}

// snapshotOrigin checks the snapshot's checkpoint: it must verify under
// the server key with the origin the snapshot names. That origin is the
// tenant's log of the store it was taken of, which need not be this one:
// a snapshot is restored into a new store (whose log name is another) as
// readily as into its own, and one taken before one log per tenant names
// the log all tenants then shared. The snapshot's own signature, by the
// server key, is what ties it to this installation.
func (s *Service) snapshotOrigin(snap *Snapshot) error {
	_, v, err := tlog.NewNoteSigner(snap.Origin, s.key.SigningKey())
	if err != nil {
		return badSnapshot("it names the log %q, which is no log origin: %v", snap.Origin, err)
	}
	if _, err := tlog.OpenCheckpoint([]byte(snap.Checkpoint), snap.Origin, v); err != nil {
		return badSnapshot("its checkpoint does not verify: %v", err)
	}
	return nil
}
