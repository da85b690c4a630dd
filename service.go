package custody

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/custody-mem/custody/embed"
	"github.com/custody-mem/custody/tlog"
	"github.com/oklog/ulid/v2"
)

// Defaults for Options.
const (
	DefaultStrongEdge   = 0.2
	DefaultReviewTTL    = 30 * 24 * time.Hour
	DefaultMaxBodyBytes = 256 << 10
	DefaultListLimit    = 50
	MaxListLimit        = 500
	DefaultSearchLimit  = 10
	MaxSearchLimit      = 100
)

// DefaultSensitiveKeys are the key patterns (case-insensitive regular
// expressions, matched anywhere in the key) whose overwrite needs the
// owner's confirmation (design rule 8).
var DefaultSensitiveKeys = []string{
	"payee", "account", "iban", "routing", "swift", "passw", "email", "phone", "address",
}

// Options configure a Service. The zero value of each field means its default.
type Options struct {
	// Policy is used by tenants that have not set their own. Default: the
	// embedded default policy.
	Policy *Policy
	// SensitiveKeys are regular expressions; default DefaultSensitiveKeys.
	SensitiveKeys []string
	// StrongEdge is the weight from which a parent caps a derived record's
	// authority. Default DefaultStrongEdge.
	StrongEdge float64
	// ReviewTTL is how long a quarantined candidate waits before the sweep
	// rejects it. Default DefaultReviewTTL.
	ReviewTTL time.Duration
	// MaxBodyBytes bounds a record body. Default DefaultMaxBodyBytes.
	MaxBodyBytes int
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// LogOrigin is the installation's log name: tenant T's log has the
	// origin LogOrigin + "/" + T in its checkpoints (see ResolveLogName,
	// which keeps it in the store). Default DefaultLogOrigin.
	LogOrigin string
	// DisableLineage turns off non-amplification and the session floor: a
	// derived or in-session write keeps its channel's authority. It exists
	// to measure what lineage buys (poisonbench's defence cells); never set
	// it in production.
	DisableLineage bool
	// RegistryFile, if set, keeps the ids of retired and rejected records
	// outside the database (conventionally beside the server key); Restore
	// never revives an id it lists, even into a new database.
	RegistryFile string
	// VerifyStatusFile, if set, is where custody verify records the outcome
	// of its last run (LastVerify reads it).
	VerifyStatusFile string
	// CheckpointFile, if set, receives a copy of every new checkpoint, kept
	// outside the database so verify can detect a rolled-back store.
	CheckpointFile string
	// ReadRetention is how long what a session's reads returned is kept
	// for the impact of a later repair. Default DefaultReadRetention.
	ReadRetention time.Duration
	// Embedder, if set, gives semantic and hybrid search (hybrid.go); the
	// vectors of one that stores them are computed by an EmbedWorker
	// (StartEmbedding), a static one's (embed.Static) at search time.
	Embedder embed.Embedder
	// Ranking switches steps of hybrid ranking off, to measure what each
	// one brings (the LoCoMo ablations), or sets their settings, to tune
	// them on one development conversation and measure them on another;
	// the zero value runs them all with the constants in force. Never set
	// it in production.
	Ranking RankingSteps
}

func (o *Options) maxBody() int {
	if o.MaxBodyBytes > 0 {
		return o.MaxBodyBytes
	}
	return DefaultMaxBodyBytes
}

// DefaultLogOrigin is the log name unless Options say otherwise; a new
// store is refused it (ResolveLogName), as every installation would share
// it.
const DefaultLogOrigin = "custody.local/log"

// Service is the governed memory: every transport calls it.
type Service struct {
	store     Store
	key       *tlog.ServerKey
	opts      Options
	policy    *Policy
	sensitive []*regexp.Regexp

	mu       sync.Mutex
	keys     map[string]ed25519.PrivateKey // unsealed principal keys
	policies map[string]*Policy            // parsed tenant policies by version
	entropy  *ulid.MonotonicEntropy
	registry *registry // nil without Options.RegistryFile
	hooksMu  sync.RWMutex
	pubMu    sync.Mutex // the checkpoint file's read, change and write
	hooks    []func(Event)

	// principalLog holds the principal entries checkPrincipal has read and
	// verified, by principal id (under mu).
	principalLog map[string]loggedPrincipal
	// commitKey keys the commitments to observation texts in the log.
	commitKey []byte
	// auth keeps verified principals by token (auth_cache.go).
	auth authCache
	// proofs keeps the upper nodes of the tenants' trees (proof_nodes.go).
	proofs proofNodes
	// hints are what writes are decided ahead against (prepare.go).
	hints hints
	// prepared, if set, runs after a write's decision was prepared (ahead
	// says whether it could be) and before its transaction (tests).
	prepared func(ahead bool)
}

// Event is what the service tells observers (metrics) after a decision.
type Event struct {
	Kind     string // "admission", "gate", "transition"
	Tenant   string
	Channel  string
	Class    Class
	Action   string
	Decision string
	Record   string // the record of an admission or transition
}

// New returns a Service over store, signing with key.
func New(store Store, key *tlog.ServerKey, opts Options) (*Service, error) {
	s := &Service{
		store: store, key: key, opts: opts, policy: opts.Policy,
		keys: map[string]ed25519.PrivateKey{}, policies: map[string]*Policy{}, principalLog: map[string]loggedPrincipal{},
		entropy: ulid.Monotonic(rand.Reader, 0), commitKey: commitKeyOf(key),
	}
	if s.policy == nil {
		s.policy = MustDefaultPolicy()
	}
	if s.opts.Now == nil {
		s.opts.Now = time.Now
	}
	if s.opts.StrongEdge <= 0 {
		s.opts.StrongEdge = DefaultStrongEdge
	}
	if s.opts.ReviewTTL <= 0 {
		s.opts.ReviewTTL = DefaultReviewTTL
	}
	if opts.RegistryFile != "" {
		s.registry = &registry{path: opts.RegistryFile}
	}
	if s.opts.LogOrigin == "" {
		s.opts.LogOrigin = DefaultLogOrigin
	}
	pats := opts.SensitiveKeys
	if pats == nil {
		pats = DefaultSensitiveKeys
	}
	for _, p := range pats {
		re, err := regexp.Compile("(?i)" + p)
		if err != nil {
			return nil, invalid("sensitive", "sensitive key pattern %q: %v", p, err)
		}
		s.sensitive = append(s.sensitive, re)
	}
	return s, nil
}

// Store returns the service's store.
func (s *Service) Store() Store { return s.store }

// MaxBodyBytes is the largest record body the service takes
// (Options.MaxBodyBytes): transports check it while they decode.
func (s *Service) MaxBodyBytes() int { return s.opts.maxBody() }

// ServerKey returns the key that signs checkpoints and server entries.
func (s *Service) ServerKey() *tlog.ServerKey { return s.key }

// OnEvent registers an observer (metrics). Observers must be quick: they
// run on the request's goroutine.
func (s *Service) OnEvent(fn func(Event)) {
	s.hooksMu.Lock()
	defer s.hooksMu.Unlock()
	s.hooks = append(s.hooks, fn)
}

// update runs fn in one write transaction. The transitions fn logs are
// told to observers only once that transaction has committed: a write that
// rolls back (its own error, or a failed commit) counts for nothing.
func (s *Service) update(ctx context.Context, fn func(Tx) error) error {
	var events []Event
	err := s.updateChecked(ctx, func() error {
		return s.store.Update(ctx, func(tx Tx) error {
			events = events[:0] // a store may run fn again
			return holdingLog(ctx, tx, func() error { return fn(&eventTx{Tx: tx, events: &events}) })
		})
	})
	if err == nil {
		for _, e := range events {
			s.emit(e)
		}
	}
	return err
}

// eventTx is a write transaction that collects the events of the
// transitions logged in it.
type eventTx struct {
	Tx
	events *[]Event
}

// emitIn tells observers of e when tx commits. Every write transaction of
// the service comes from update, so tx is always an eventTx.
func emitIn(tx Tx, e Event) {
	et := tx.(*eventTx)
	*et.events = append(*et.events, e)
}

func (s *Service) emit(e Event) {
	s.hooksMu.RLock()
	defer s.hooksMu.RUnlock()
	for _, h := range s.hooks {
		h(e)
	}
}

func (s *Service) now() time.Time { return s.opts.Now().UTC() }

func (s *Service) newID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ulid.MustNew(ulid.Timestamp(s.opts.Now()), s.entropy).String()
}

// Sensitive reports whether key matches a sensitive pattern.
func (s *Service) Sensitive(key string) bool {
	for _, re := range s.sensitive {
		if key != "" && re.MatchString(key) {
			return true
		}
	}
	return false
}

// Caller is an authenticated principal acting for a subject.
type Caller struct {
	Principal *Principal
	Subject   *Principal
}

// Tenant is the caller's tenant.
func (c *Caller) Tenant() string { return c.Principal.Tenant }

func (c *Caller) scope(now time.Time) Scope {
	return Scope{Tenant: c.Tenant(), Subject: c.Subject.Name, Groups: c.Subject.Groups, Now: now}
}

// Act resolves the subject a principal acts for (design section 2: the
// subject is a user of the tenant). A user acts for itself only; an agent
// must name a user of its tenant, never itself, another agent or any
// principal without the user role; reviewers, policy owners and admins act
// for themselves on the routes of their roles, and an admin may name any
// user. Naming anyone not allowed is ErrSubjectNotAllowed whether or not
// the name exists.
func (s *Service) Act(ctx context.Context, p *Principal, subject string) (*Caller, error) {
	if subject != "" && subject != p.Name {
		// A principal authenticated from the cache (AuthenticateWrite)
		// is checked before it acts for another: its subject is read
		// anyway.
		var err error
		if p, err = s.freshPrincipal(ctx, p); err != nil {
			return nil, err
		}
	}
	denied := &Error{Kind: ErrSubjectNotAllowed, Msg: fmt.Sprintf("principal %s may not act for subject %q; the subject must be a user principal of tenant %s", p.ID(), subject, p.Tenant)}
	agent := p.Has(RoleAgent) && !p.Has(RoleUser)
	switch {
	case subject == "" && agent:
		return nil, &Error{Kind: ErrInvalid, Field: "subject", Msg: "an agent principal must name the user it acts for (the subject)"}
	case agent && subject == p.Name:
		return nil, denied
	case subject == "" || subject == p.Name:
		return &Caller{Principal: p, Subject: p}, nil
	case p.Has(RoleUser) || !p.HasAny(RoleAgent, RoleAdmin):
		return nil, denied
	}
	sub, err := s.subject(ctx, p.Tenant, subject)
	if errors.Is(err, errNoSubject) {
		return nil, denied
	} else if err != nil {
		return nil, err
	}
	return &Caller{Principal: p, Subject: sub}, nil
}

// PrincipalInput describes a principal to create.
type PrincipalInput struct {
	Tenant, Name string
	Roles        []string
	Channels     []string
	Groups       []string
}

// AddPrincipal creates a principal (and its tenant, if new) with a fresh
// Ed25519 key sealed under the server key, and returns its bearer token,
// which is not stored.
func (s *Service) AddPrincipal(ctx context.Context, in PrincipalInput) (*Principal, string, error) {
	if err := ValidName("tenant", in.Tenant); err != nil {
		return nil, "", err
	}
	if err := ValidName("name", in.Name); err != nil {
		return nil, "", err
	}
	if len(in.Roles) == 0 {
		return nil, "", invalid("role", "give at least one --role (user, agent, reviewer, policy_owner, admin, auditor)")
	}
	for _, r := range in.Roles {
		if err := ValidRole(r); err != nil {
			return nil, "", err
		}
	}
	channels := in.Channels
	if len(channels) == 0 {
		channels = DefaultChannels(in.Roles)
	}
	for _, c := range channels {
		if err := ValidChannel(c); err != nil {
			return nil, "", err
		}
	}
	for _, g := range in.Groups {
		if err := ValidName("group", g); err != nil {
			return nil, "", err
		}
	}
	pub, priv, err := tlog.GeneratePrincipalKey()
	if err != nil {
		return nil, "", err
	}
	p := &Principal{Tenant: in.Tenant, Name: in.Name, Roles: in.Roles, Channels: channels, Groups: in.Groups, PublicKey: pub, CreatedAt: s.now()}
	sealed, err := s.key.Seal(priv, []byte(p.ID()))
	if err != nil {
		return nil, "", err
	}
	token, hash := NewToken()
	err = s.update(ctx, func(tx Tx) error {
		if _, err := tx.Principal(ctx, p.Tenant, p.Name); err == nil {
			return conflict("principal %s already exists", p.ID())
		} else if !errors.Is(err, ErrNotFound) {
			return err
		}
		if err := tx.InsertPrincipal(ctx, p, hash, sealed); err != nil {
			return err
		}
		p.TokenHash, p.SealedKey = hash, sealed
		details := principalState(p)
		details["name"] = p.Name
		idx, err := s.appendServer(ctx, tx, &tlog.Entry{Tenant: p.Tenant, Transition: TransitionPrincipal, Details: details})
		p.LogIndex = int64(idx)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	return p, token, nil
}
