package sqlite

import (
	"context"

	custody "github.com/custody-mem/custody"
	"github.com/custody-mem/custody/tlog"
)

// known is what the writer knows of the database between its own
// transactions: each tenant log's border nodes (so an append reads neither the log
// size nor the nodes) and the tenants' active policies (so an admission
// does not read its policy text). It holds while no other connection
// commits: the writer reads PRAGMA data_version, which moves only with
// other connections' commits, once at the start of each transaction on its
// own connection, and forgets everything when it moved. It also forgets
// everything when a savepoint or a transaction rolls back, as it may hold
// what was rolled back.
type known struct {
	version  int64
	tips     map[string]*tlog.Border // by tenant
	policies map[string]policyText   // by tenant
	// pauses are the tenants' pauses not resumed, whatever their end (an
	// admission reads them: pauses.go), by tenant.
	pauses map[string][]*custody.Pause
	// held are the log rows the write under way holds back (log_hold.go).
	held heldRows
}

// policyText is a tenant's active policy; found is false if it has none.
type policyText struct {
	text  []byte
	found bool
}

func (k *known) forget() {
	k.held = heldRows{}
	k.tips = nil
	k.policies = nil
	k.pauses = nil
}

// check reads the connection's data version in the transaction just begun
// (a cached statement: preparing the pragma anew was a tenth of a write)
// and forgets everything if another connection has committed since the
// last check.
func (k *known) check(ctx context.Context, tx queryer) error {
	var v int64
	if err := tx.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&v); err != nil {
		k.forget()
		return err
	}
	if v != k.version {
		k.forget()
		k.version = v
	}
	return nil
}

func (k *known) setPolicy(tenant string, p policyText) {
	if k.policies == nil {
		k.policies = map[string]policyText{}
	}
	k.policies[tenant] = p
}
