package sqlite_test

// toSharedLog rewinds the log tables of a store of one tenant to the
// layout of schema 12 and before, one log shared by all tenants (its
// indexes are then the tenant's own): what a store written before one log
// per tenant holds.
var toSharedLog = []string{
	`ALTER TABLE log_leaves RENAME TO log_leaves_13`,
	`CREATE TABLE log_leaves (idx INTEGER PRIMARY KEY, tenant TEXT NOT NULL, data BLOB NOT NULL)`,
	`INSERT INTO log_leaves SELECT idx, tenant, data FROM log_leaves_13`,
	`DROP TABLE log_leaves_13`,
	`ALTER TABLE log_nodes RENAME TO log_nodes_13`,
	`CREATE TABLE log_nodes (seq INTEGER NOT NULL, level INTEGER NOT NULL, hash BLOB NOT NULL, PRIMARY KEY (seq, level)) WITHOUT ROWID`,
	`INSERT INTO log_nodes SELECT seq, level, hash FROM log_nodes_13`,
	`DROP TABLE log_nodes_13`,
	`ALTER TABLE checkpoints RENAME TO checkpoints_13`,
	`CREATE TABLE checkpoints (size INTEGER PRIMARY KEY, note BLOB NOT NULL)`,
	`INSERT INTO checkpoints SELECT size, note FROM checkpoints_13`,
	`DROP TABLE checkpoints_13`,
	`DROP TABLE log_legacy`,
	`DROP TABLE log_legacy_checkpoints`,
}
