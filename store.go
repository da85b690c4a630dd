package custody

import (
	"context"
	"time"

	"github.com/transparency-dev/merkle/compact"
)

// Store is what the domain needs of a storage backend. Reads that return
// records to a subject (Get, List, Search) filter eligibility inside the
// query — tenant, audience, state and expiry — never after a LIMIT. Every
// other access goes through a transaction, so a state change and its log
// entry commit together or not at all.
type Store interface {
	// Update runs fn in one write transaction; an error from fn rolls back.
	Update(ctx context.Context, fn func(Tx) error) error
	// View runs fn in a read-only transaction that sees one consistent
	// snapshot of the whole store, records and log alike, for as long as fn
	// runs: writes that commit meanwhile are not seen (SQLite: one read
	// transaction on one connection; PostgreSQL: REPEATABLE READ READ ONLY).
	// Verify reads everything through one View, so that it can run beside a
	// server that writes.
	View(ctx context.Context, fn func(Tx) error) error

	PrincipalByToken(ctx context.Context, hash []byte) (*Principal, error)
	Get(ctx context.Context, s Scope, id string) (*Record, error)
	List(ctx context.Context, s Scope, f ListFilter) ([]*Record, error)
	Search(ctx context.Context, s Scope, q SearchQuery) ([]Scored, error)
	// Namespaces lists, in order, the namespaces of the records eligible
	// for s that are prefix or start with prefix and "/" (prefix "": all),
	// at most limit of them, after the namespace after.
	Namespaces(ctx context.Context, s Scope, prefix, after string, limit int) ([]string, error)

	LogStore
	MetaStore
	Close() error
}

// LogStore reads the Merkle logs and keeps their checkpoints. Its reads
// on the Store each see the latest commit; the same reads on a Tx see that
// transaction's snapshot.
type LogStore interface {
	LogReader
	SaveCheckpoint(ctx context.Context, tenant string, size uint64, note []byte) error
}

// LogReader reads the Merkle logs, one RFC 6962 tree per tenant: each
// tenant's size, leaves, tree nodes and latest stored checkpoint. Indexes
// count from 0 in each tenant's log on its own. LogOf binds it to one
// tenant.
type LogReader interface {
	// LogTenants lists, in order, the tenants that have a log: entries
	// or a stored checkpoint.
	LogTenants(ctx context.Context) ([]string, error)
	LogSize(ctx context.Context, tenant string) (uint64, error)
	Leaves(ctx context.Context, tenant string, start, end uint64) ([]Leaf, error)
	Nodes(ctx context.Context, tenant string, ids []compact.NodeID) ([][]byte, error)
	LatestCheckpoint(ctx context.Context, tenant string) (size uint64, note []byte, err error)
}

// Leaf is one stored log leaf: its index in its tenant's log.
type Leaf struct {
	Index  uint64
	Tenant string
	Data   []byte
}

// MetaStore keeps the store's own settings, such as its log name
// (MetaLogName), with the data they describe.
type MetaStore interface {
	// Meta returns the value of name; "" when unset.
	Meta(ctx context.Context, name string) (string, error)
	// SetMeta sets name to value unless it is set already, and returns
	// the value it holds then (value, or the one set before).
	SetMeta(ctx context.Context, name, value string) (string, error)
}

// Tx is one transaction. Methods that name a tenant never see another
// tenant's rows.
type Tx interface {
	Record(ctx context.Context, tenant, id string) (*Record, error) // any state; ErrNotFound
	// Current is the newest admitted version of a key, or nil.
	Current(ctx context.Context, tenant, owner, namespace, key string) (*Record, error)
	// CurrentID is the id of Current, or "": whether a write overwrites,
	// or a record is the version in force, without reading the record.
	CurrentID(ctx context.Context, tenant, owner, namespace, key string) (string, error)
	MaxVersion(ctx context.Context, tenant, owner, namespace, key string) (int, error)
	// KeyVersions is CurrentID and MaxVersion in one read: what a new
	// version of a key is decided on.
	KeyVersions(ctx context.Context, tenant, owner, namespace, key string) (current string, max int, err error)
	Versions(ctx context.Context, tenant, owner, namespace, key string) ([]*Record, error)
	InsertRecord(ctx context.Context, r *Record) error
	UpdateRecord(ctx context.Context, r *Record) error
	// Children lists the ids of records with an edge from id.
	Children(ctx context.Context, tenant, id string) ([]string, error)
	// Descendants lists every record reachable from id by child edges,
	// transitively, with its state, in ascending id order.
	Descendants(ctx context.Context, tenant, id string) ([]IDState, error)
	// SetStates moves records (as Descendants gave them) to state with a
	// log index and a receipt, in bulk (a cascade).
	SetStates(ctx context.Context, tenant string, recs []IDState, state State, logIndex uint64, rc *Receipt) error
	// InState lists records of a tenant in one of states, oldest first, after
	// the id cursor.
	InState(ctx context.Context, tenant string, states []State, after string, limit int) ([]*Record, error)
	// Mentioning lists the records of s.Tenant that s.Subject owns or whose
	// audience includes it (the tenant, or "group:" and one of s.Groups),
	// in any state and whatever their expiry, whose gate index text
	// (RecordGateIndex) contains q.Text, newest first, at most q.Limit of
	// them (0: all). The audience is filtered inside the query, so records
	// other users write cannot push the subject's out of sight. With
	// q.InForceFrom set, only admitted records of at least that authority
	// are listed. A text shorter than three characters is looked for among
	// the subject's records (no trigram index can find it).
	Mentioning(ctx context.Context, s Scope, q MentionQuery) ([]*Record, error)
	ScanRecords(ctx context.Context, tenant string, fn func(*Record) error) error

	// InsertPrincipal stores a new principal with no log index. Principal,
	// Principals and Store.PrincipalByToken fill in the principal's
	// TokenHash, SealedKey and LogIndex.
	InsertPrincipal(ctx context.Context, p *Principal, tokenHash, sealedKey []byte) error
	Principal(ctx context.Context, tenant, name string) (*Principal, error)
	SealedKey(ctx context.Context, tenant, name string) ([]byte, error)
	// Principals lists a tenant's principals ("" = all), by tenant and name.
	Principals(ctx context.Context, tenant string) ([]*Principal, error)
	TokenHash(ctx context.Context, tenant, name string) ([]byte, error)
	// SetPrincipalLogIndex records the index of the principal's latest log
	// entry with it (Principal.LogIndex).
	SetPrincipalLogIndex(ctx context.Context, tenant, name string, index uint64) error
	// UpdatePrincipal replaces p's roles, channels and groups and its token
	// hash and sealed key (a change, a rotation or a revocation).
	UpdatePrincipal(ctx context.Context, p *Principal, tokenHash, sealedKey []byte) error

	// InsertPause stores a new pause; ResumePause stores its ResumedAt and
	// ResumedBy. Pauses lists a tenant's pauses ("" = all), oldest first.
	InsertPause(ctx context.Context, p *Pause) error
	ResumePause(ctx context.Context, p *Pause) error
	Pauses(ctx context.Context, tenant string) ([]*Pause, error)
	// OpenPauses lists the tenant's pauses that hold writes at now: not
	// resumed, and without an end or ending after now. Every write reads it.
	OpenPauses(ctx context.Context, tenant string, now time.Time) ([]*Pause, error)

	Policy(ctx context.Context, tenant string) (text []byte, err error) // ErrNotFound when none was set
	SetPolicy(ctx context.Context, tenant string, text []byte, actor string, at time.Time) error

	InsertSession(ctx context.Context, s *Session) error
	Session(ctx context.Context, tenant, id string) (*Session, error)
	AddObservation(ctx context.Context, o *Observation) error
	Observations(ctx context.Context, tenant, session string) ([]*Observation, error)
	// ScanSessions calls fn for every session of every tenant (Floor and
	// External are not set); ScanObservations for every observation.
	ScanSessions(ctx context.Context, fn func(*Session) error) error
	ScanObservations(ctx context.Context, fn func(*Observation) error) error
	// EraseObservations empties the text of the tenant's observations
	// whose source is sourceRef: those that copied a record's body into a
	// session (memory:<id>), when the record is erased.
	EraseObservations(ctx context.Context, tenant, sourceRef string) error

	// InsertEndorsement stores an endorsement (endorse.go); Endorsements
	// lists a session's, oldest first; ScanEndorsements calls fn for
	// every endorsement of every tenant.
	InsertEndorsement(ctx context.Context, e *Endorsement) error
	Endorsements(ctx context.Context, tenant, session string) ([]*Endorsement, error)
	ScanEndorsements(ctx context.Context, fn func(*Endorsement) error) error

	InsertGrant(ctx context.Context, g *Grant) error
	// UseGrant marks an unused grant matching g's tenant, subject and digest
	// used, and reports whether there was one.
	UseGrant(ctx context.Context, tenant, subject, digest string, at time.Time) (bool, error)
	// ScanGrants calls fn for every grant of every tenant, as stored.
	ScanGrants(ctx context.Context, fn func(*StoredGrant) error) error

	// Tombstone registers a retired or rejected id; Tombstoned reports it.
	Tombstone(ctx context.Context, tenant, id string, state State) error
	Tombstoned(ctx context.Context, tenant, id string) (bool, error)
	// Tombstones calls fn for every registered id of every tenant.
	Tombstones(ctx context.Context, fn func(tenant, id string, state State) error) error

	// AppendLeaf adds a leaf to the tenant's Merkle log and returns its
	// index there.
	AppendLeaf(ctx context.Context, tenant string, leaf []byte) (uint64, error)
	// LogReader reads the log as this transaction sees it.
	LogReader
	// ImpactTx keeps what sessions read and what gate decisions relied on.
	ImpactTx
}

// IDState is a record id and its state. Ref is the store's own handle on
// the record's row (SQLite's rowid), which SetStates uses to skip looking
// the id up again; zero when the store keeps none.
type IDState struct {
	ID    string
	State State
	Ref   int64
}

// MentionQuery is what Tx.Mentioning looks for.
type MentionQuery struct {
	// Text is a fragment of gate index text: a canon.Ident, or a marker
	// of an amount or an e-mail address (GateIndexText).
	Text string
	// Limit bounds the records listed, newest first; 0 lists all.
	Limit int
	// InForceFrom, if set, lists only admitted records of at least this
	// authority: those that may back a value.
	InForceFrom Authority
}

// Scope is who a retrieval is for.
type Scope struct {
	Tenant  string
	Subject string
	Groups  []string
	Now     time.Time
}

// ListFilter narrows a listing; zero fields do not filter.
type ListFilter struct {
	Namespace string
	// NamespacePrefix keeps the records in this namespace or below it
	// (work: work and work/notes, not workshop).
	NamespacePrefix string
	Key             string
	Class           Class
	Filters
	Limit int
	After string // id cursor: return records with ids below it (newest first)
}

// SearchQuery is a plain-text search.
type SearchQuery struct {
	Text      string
	Namespace string
	// NamespacePrefix is as in ListFilter.
	NamespacePrefix string
	Class           Class
	Filters
	Limit int
}

// Scored is a search hit: a record and its relevance (higher is better).
type Scored struct {
	*Record
	Score float64 `json:"score"`
	// Lists names the candidate lists that found the record: "lexical",
	// "semantic" or both (hybrid.go), or "context" for an episode found as
	// the one written after a match (contiguity.go).
	Lists []string `json:"lists,omitempty"`
}

// HeadChecker is implemented by a Tx whose store keeps "newest admitted
// version of its key" as a stored flag rather than computing it in every
// query (SQLite's head column). Verify asks it for a record whose flag
// disagrees with its key's versions: the flag decides what retrieval
// returns, so tampering with it must not go unseen.
type HeadChecker interface {
	MisflaggedHead(ctx context.Context) (id string, err error)
}

// EdgeChecker is implemented by a Tx whose store keeps the lineage edges
// apart from the records' parents, as both backends do: a cascade walks the
// edges, so an edge deleted, added or pointed elsewhere would let a
// quarantine miss a descendant while the records still match the log.
// Verify asks it for a record whose edges disagree with its parents.
type EdgeChecker interface {
	MisplacedEdge(ctx context.Context) (id string, err error)
}

// IndexChecker is implemented by a Tx whose store keeps text indexes of
// the records (SQLite's FTS5 search and trigram indexes, PostgreSQL's
// search vector and gate text columns): the gate finds the memories that
// mention a payment's arguments through them, so a row deleted or
// rewritten would hide a memory from the gate.
// Verify asks it for a record whose index rows are missing, left behind or
// not its own, and what is wrong.
type IndexChecker interface {
	MisindexedRecord(ctx context.Context) (id, what string, err error)
}

// LegacyLog is implemented by a Tx of a store migrated from the single
// log all tenants once shared (SQLite schema 12 and before, PostgreSQL
// migration 6 and before). The migration re-sequenced that log: each
// tenant's leaves, in their old order and with the same bytes, became
// that tenant's log, and the old log's order (which tenant each of its
// leaves belonged to) was kept, so that the old log is rebuilt from the
// tenants' leaves and still verifies against the checkpoints signed
// before (Verify, CheckPublished).
type LegacyLog interface {
	// LegacyTenants calls fn with the tenant of each leaf of the old log,
	// in order; none on a store that never had one.
	LegacyTenants(ctx context.Context, fn func(index uint64, tenant string) error) error
	// LegacyCheckpoint returns the latest checkpoint of the old log;
	// ErrNotFound if none.
	LegacyCheckpoint(ctx context.Context) (size uint64, note []byte, err error)
}

// Reindexer is implemented by a store that can rebuild every structure it
// derives from the records for speed (the ones the checkers above check)
// from the records alone, in one transaction. progress, if set, is told
// how many records are done out of the total.
type Reindexer interface {
	Reindex(ctx context.Context, progress func(done, total uint64)) error
}
