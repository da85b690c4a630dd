package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Every table and column either store keeps is declared here: covered by
// custody verify (Verify names the check that compares it with the log,
// or with the records that verify compares with the log), or derived or
// ephemeral (Derived says why an edit of it can never widen a right or
// change a decision). Both stores' TestSchemaCoverage enumerate their
// real schema (SQLite's sqlite_schema, PostgreSQL's information_schema of
// a migrated database) and fail on a column declared nowhere, or declared
// but gone. A new table or column lands with its line here.

// Declaration covers columns of one table.
type Declaration struct {
	Table string
	// Columns are the column names, separated by spaces; "*" is every
	// column of a table whose columns the database engine defines (an
	// FTS5 table's shadow tables).
	Columns string
	// Backend is "sqlite" or "postgres" for a column of one store only;
	// "" for both.
	Backend string
	// Verify names the check of custody verify that covers the columns.
	Verify string
	// Derived says why the columns need no cover: what they are derived
	// from or what they hold for a while, and why an edit of them can
	// never widen a right or change a decision.
	Derived string
}

// Declarations are the tables and columns of both stores.
var Declarations = []Declaration{
	// The store's own settings and bookkeeping.
	{Table: "meta", Columns: "name value", Verify: "checkCheckpoints: the one setting, log_name, is the origin every stored checkpoint of every tenant signs, so a changed name fails their check"},
	{Table: "schema_migrations", Columns: "version name applied_at", Backend: "postgres", Derived: "which migrations ran; it decides which schema steps run when the store opens, never what a principal may do or what a record is"},
	{Table: "principals_version", Columns: "id n", Derived: "a counter the triggers bump with every change of a principals row, telling a server to read principals again (auth_cache.go); every principal read is checked against its log entry (checkPrincipal), so a wrong counter only delays seeing a change another process made, until the server reads again or restarts, and whatever a revoked principal writes meanwhile is signed by it, which verify reports as signed after its revocation"},

	// Principals.
	{Table: "principals", Columns: "tenant name", Verify: "comparePrincipals: every row is a principal the log introduced, and every logged principal has its row"},
	{Table: "principals", Columns: "roles channels groups_ public_key token_hash sealed_key", Verify: "comparePrincipals (principalDiff): equal to, or the SHA-256 named by, the principal's latest log entry; authentication checks the same (checkPrincipal)"},
	{Table: "principals", Columns: "log_index", Verify: "comparePrincipals: points at the principal's latest entry, whose signature authentication checks"},
	{Table: "principals", Columns: "created_at", Derived: "when the principal was added, shown by custody principal show; nothing decides on it"},

	// Records.
	{Table: "records", Columns: "id tenant", Verify: "compareState: every row is a record the log names, by tenant and id, and every logged record has its row"},
	{Table: "records", Columns: "owner namespace key class channel writer source_ref authority audience state created_at expires_at version log_index session parents erased", Verify: "compareRecord: each equals the record's latest log entry"},
	{Table: "records", Columns: "body salt", Verify: "compareRecord: HMAC-SHA256(salt, body) is the body hash of the record's latest entry; both empty once erased"},
	{Table: "records", Columns: "metadata", Verify: "compareRecord: matches the metadata commitment of the record's latest entry; empty once erased"},
	{Table: "records", Columns: "receipt policy_version", Verify: "compareReceipt: the receipt's log index, actor, time, reason, rules, error and admission inputs, and the policy version, are the latest entry's"},
	{Table: "records", Columns: "rid", Backend: "sqlite", Verify: "MisplacedEdge and MisindexedRecord: every edge, index and pending row that points at a rid must be that record's (custody reindex rebuilds them)"},
	{Table: "records", Columns: "head", Backend: "sqlite", Verify: "MisflaggedHead: equals whether the record is the newest admitted version of its key"},
	{Table: "records", Columns: "search norm", Backend: "postgres", Verify: "MisindexedRecord: rebuilt from the record's fields (its body and key; for norm, every field the gate reads: custody.RecordGateIndex) and compared (custody reindex rebuilds them)"},
	{Table: "edges", Columns: "tenant parent child weight", Verify: "MisplacedEdge: every edge is one of its child's logged parents with its weight, and every logged parent has its edge"},
	{Table: "edges", Columns: "child_rid", Backend: "sqlite", Verify: "MisplacedEdge: the row it points at is the child's"},
	{Table: "tombstones", Columns: "tenant id state", Verify: "compareTombstones: every row is a terminal state the log records, with that state, and every logged terminal state has its row"},
	{Table: "vectors", Columns: "model dim vec", Derived: "made from a record's body by an embedding model that stores vectors (openai; never the built-in one, which scores texts at search time), deleted with it on erasure; a vector only orders the records a semantic search finds, and eligibility is filtered on the records rows in the same query (custody reindex --embeddings makes them again)"},
	{Table: "vectors", Columns: "rid", Backend: "sqlite", Derived: "the record the vector was made from; a vector under another record only changes that record's place in a semantic search, among records eligibility already allows"},
	{Table: "vectors", Columns: "id", Backend: "postgres", Derived: "the record the vector was made from; a vector under another record only changes that record's place in a semantic search, among records eligibility already allows"},

	// SQLite's search and gate indexes: contentless FTS5 tables, their
	// shadow tables, and the rows waiting to enter them.
	{Table: "records_fts", Columns: "body key", Backend: "sqlite", Verify: "MisindexedRecord: every live record has its row, no erased or missing record has one (contentless: the terms themselves are not compared; custody reindex rebuilds the index from the records)"},
	{Table: "records_tri", Columns: "norm", Backend: "sqlite", Verify: "MisindexedRecord: every live record has its row, with as many trigrams as its gate text, and no erased or missing record has one (custody reindex rebuilds the index from the records)"},
	{Table: "records_fts_data", Columns: "*", Backend: "sqlite", Verify: "MisindexedRecord, through the FTS5 table records_fts that keeps its segments here"},
	{Table: "records_fts_idx", Columns: "*", Backend: "sqlite", Verify: "MisindexedRecord, through the FTS5 table records_fts that keeps its segment index here"},
	{Table: "records_fts_docsize", Columns: "*", Backend: "sqlite", Verify: "MisindexedRecord: one row per live record, none for an erased or missing one"},
	{Table: "records_fts_config", Columns: "*", Backend: "sqlite", Derived: "FTS5's settings of records_fts (secure-delete, usermerge), set again by schema.sql at every open; they decide how segments merge, not which record matches"},
	{Table: "records_tri_data", Columns: "*", Backend: "sqlite", Verify: "MisindexedRecord, through the FTS5 table records_tri that keeps its segments here"},
	{Table: "records_tri_idx", Columns: "*", Backend: "sqlite", Verify: "MisindexedRecord, through the FTS5 table records_tri that keeps its segment index here"},
	{Table: "records_tri_docsize", Columns: "*", Backend: "sqlite", Verify: "MisindexedRecord: one row per live record with its trigram count, none for an erased or missing one"},
	{Table: "records_tri_config", Columns: "*", Backend: "sqlite", Derived: "FTS5's settings of records_tri (secure-delete, usermerge), set again by schema.sql at every open; they decide how segments merge, not which record matches"},
	{Table: "index_pending", Columns: "rid norm", Backend: "sqlite", Verify: "MisindexedRecord: each row is a live record waiting for the indexes, with that record's own gate text, and no row of it is in either index yet"},
	{Table: "search_moved", Columns: "rid", Backend: "sqlite", Derived: "lists, inside one transaction, the records whose state, head or audience it changed, so that its commit moves them to their partition in the in-memory copy of the search index (search_moves.go); it is empty between transactions, a row left or removed only misplaces a record in the copy's statistics until its next build, and eligibility is filtered on the records rows either way"},
	{Table: "search_generation", Columns: "id gen", Backend: "sqlite", Derived: "counts the commits that changed records already indexed (a removal, a move between partitions, a rebuild); with the last rid of records (every record is indexed as it is inserted) it is the position a server compares with its in-memory copy of the index to know whether the copy is current (searchPos, search_index.go); a wrong count makes it rank with FTS5 or an older copy, and eligibility is filtered on the records rows either way"},

	// What decides access outside the records.
	{Table: "policies", Columns: "tenant text seq", Verify: "comparePolicy: the row a tenant's policy is read from (its highest seq) has the version of the tenant's latest policy entry"},
	{Table: "policies", Columns: "digest", Backend: "postgres", Derived: "the SHA-256 of the row's text, a column PostgreSQL generates as the row is written; a batch run ahead compares the newest row's with the digest of the policy it decided under (postgres/ahead.go), so a digest that differs only sends the batch to read the text again, and admission and the gate decide on the text alone"},
	{Table: "policies", Columns: "actor created_at", Derived: "who stored the policy and when, shown with it; admission and the gate read the text only"},
	{Table: "pauses", Columns: "id tenant writer channel reason by_ created_at until resumed_at resumed_by", Verify: "comparePauses: every row is its latest pause or resume entry, and every logged pause has its row"},
	{Table: "endorsements", Columns: "id tenant session subject source_ref actions until created_at log_index", Verify: "compareEndorsements: every row is its endorse entry (signed by the subject), with its session, subject, source, actions, time limit, time and index, and every logged endorsement has its row"},
	{Table: "grants", Columns: "tenant subject digest actor used_at", Verify: "compareGrants: per tenant, subject and action digest, the rows by each actor are the log's confirm_action entries, and the rows marked used (used_at set) are the gate decisions that spent one"},
	{Table: "grants", Columns: "id created_at", Derived: "the row's own id and time; the gate spends any unused row of the tenant, subject and digest, so neither decides which action is allowed"},

	// Sessions.
	{Table: "sessions", Columns: "id tenant subject opener", Verify: "compareSessions: every row is its session entry (subject and opener), and every logged session has its row"},
	{Table: "sessions", Columns: "created_at", Verify: "compareSessions: a session dated before the log's first session entry is one stored before sessions were logged; verify lists those as uncovered (VerifyReport.Uncovered) instead of comparing them"},
	{Table: "observations", Columns: "id tenant session channel source_ref authority", Verify: "compareSessions: every row is its observation entry, and every logged observation has its row"},
	{Table: "observations", Columns: "text", Verify: "compareSessions: matches the HMAC commitment of its entry; empty only where it copied the body of a record the log says was erased (source memory:<id>)"},
	{Table: "observations", Columns: "created_at", Derived: "when the observation was stored, shown with it; the session's floor and the gate read its channel, authority and text only"},
	{Table: "session_reads", Columns: "tenant record session via reads first_at last_at", Derived: "what sessions' reads returned, for a repair's impact and to tell those sessions, by an external observation, that a record they read is no longer in force; a missing row acts as a read older than the read retention, which the server prunes itself, and an added row only lowers a session's floor"},
	{Table: "gate_refs", Columns: "tenant record log_index how action decision subject session at", Derived: "the records each gate decision cited or traced, for the impact view; the decision itself is in the log, and nothing decides on these rows"},

	// The logs.
	{Table: "log_leaves", Columns: "tenant idx data", Verify: "verifyLog: every leaf is parsed, its signature checked against its actor's logged key, and hashed into its tenant's tree, whose root must match the stored and given checkpoints (SQLite stores a leaf packed, which reads back as the signed leaf; a damaged packed row reads as bytes that do not hash into the tree)"},
	{Table: "log_leaves", Columns: "nodes", Backend: "sqlite", Verify: "compareNodes: every stored node (the hashes of the nodes the leaf's append completed, kept in its row) equals the one recomputed from the leaves; a row too short for a node reads as that node missing, and bytes past the levels the append completed are read by no proof"},
	{Table: "log_nodes", Columns: "tenant level hash idx", Backend: "postgres", Verify: "compareNodes: every stored node equals the one recomputed from the leaves"},
	{Table: "checkpoints", Columns: "tenant size note", Verify: "checkCheckpoints: every stored checkpoint is signed by the server key and names the root of its size"},
	{Table: "log_legacy", Columns: "idx tenant", Verify: "checkLegacyLog: the log all tenants once shared, rebuilt from the tenants' logs in this order, matches its checkpoints"},
	{Table: "log_legacy_checkpoints", Columns: "size note", Verify: "checkLegacyLog: each is signed by the server key and names the root of the rebuilt shared log"},
	{Table: "witness_cosignatures", Columns: "origin witness size cosigned signature", Verify: "custody verify --witness: each cosignature is checked against its witness's key on the latest checkpoint; a row deleted or edited fails that count, and a witness asked directly refuses a rolled-back log"},
	{Table: "published_checkpoints", Columns: "origin size note", Verify: "custody verify: each published checkpoint is checked as a --checkpoint is (the server's signature, the root of its size recomputed from the leaves), and with --witness-policy its cosignatures must meet the policy"},
}

// Column is one column of a table of a store's schema.
type Column struct{ Table, Name string }

// CheckSchemaCoverage fails t with each of SchemaCoverageProblems.
func CheckSchemaCoverage(t *testing.T, backend string, cols []Column) {
	t.Helper()
	for _, p := range SchemaCoverageProblems(backend, cols) {
		t.Error(p)
	}
}

// SchemaCoverageProblems names every column of cols (the real schema of
// backend, "sqlite" or "postgres") that Declarations does not declare,
// every declaration of backend that names a column the schema does not
// have, and every malformed declaration.
func SchemaCoverageProblems(backend string, cols []Column) []string {
	var out []string
	errorf := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	if len(cols) == 0 {
		return []string{"the schema has no columns: the enumeration read nothing"}
	}
	type key struct{ table, column string }
	declared := map[key]*Declaration{}
	whole := map[string]*Declaration{}
	for i := range Declarations {
		d := &Declarations[i]
		if (d.Verify == "") == (d.Derived == "") {
			errorf("the declaration of %s (%s) must give exactly one of Verify (the check that covers it) and Derived (why it needs none)", d.Table, d.Columns)
		}
		if d.Backend != "" && d.Backend != "sqlite" && d.Backend != "postgres" {
			errorf("the declaration of %s (%s) names backend %q; use \"sqlite\", \"postgres\" or \"\" for both", d.Table, d.Columns, d.Backend)
		}
		if d.Backend != "" && d.Backend != backend {
			continue
		}
		if d.Columns == "*" {
			whole[d.Table] = d
			continue
		}
		for _, c := range strings.Fields(d.Columns) {
			k := key{d.Table, c}
			if declared[k] != nil {
				errorf("%s.%s is declared twice for %s; keep one declaration", d.Table, c, backend)
			}
			declared[k] = d
		}
	}
	present := map[key]bool{}
	tables := map[string]bool{}
	for _, c := range cols {
		present[key{c.Table, c.Name}] = true
		tables[c.Table] = true
		if declared[key{c.Table, c.Name}] != nil || whole[c.Table] != nil {
			continue
		}
		errorf("%s.%s (%s) is declared nowhere: add to storetest/schema_coverage.go\n"+
			"\t{Table: %q, Columns: %q, Backend: %q, Verify: \"<the check of custody verify that compares it with the log>\"},\n"+
			"or, if verify cannot cover it,\n"+
			"\t{Table: %q, Columns: %q, Backend: %q, Derived: \"<what it is derived from or holds for a while, and why an edit of it can never widen a right or change a decision>\"},\n"+
			"(Backend \"\" when both stores have it)",
			c.Table, c.Name, backend, c.Table, c.Name, backend, c.Table, c.Name, backend)
	}
	var stale []string
	for k := range declared {
		if !present[k] {
			stale = append(stale, k.table+"."+k.column)
		}
	}
	for table := range whole {
		if !tables[table] {
			stale = append(stale, table+".*")
		}
	}
	slices.Sort(stale)
	for _, s := range stale {
		errorf("%s is declared in storetest/schema_coverage.go for %s but the %s schema has no such column: remove it from its declaration, or give the declaration Backend %q", s, backend, backend, other(backend))
	}
	return out
}

func other(backend string) string {
	if backend == "sqlite" {
		return "postgres"
	}
	return "sqlite"
}
