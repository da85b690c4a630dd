package sqlite

import (
	"context"
	"fmt"

	custody "github.com/custody-mem/custody"
)

// UpdatePrincipal replaces a principal's roles, channels, groups, token
// hash and sealed key; its name, public key, creation time and log index
// stay.
func (t *txn) UpdatePrincipal(ctx context.Context, p *custody.Principal, tokenHash, sealedKey []byte) error {
	if t.ro {
		return errReadOnly
	}
	res, err := t.ExecContext(ctx, `UPDATE principals SET roles = ?, channels = ?, groups_ = ?, token_hash = ?, sealed_key = ?
 WHERE tenant = ? AND name = ?`, jsonText(p.Roles), jsonText(p.Channels), jsonText(nonNil(p.Groups)), tokenHash, sealedKey, p.Tenant, p.Name)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("updating principal %s: %d rows, %v", p.ID(), n, err)
	}
	return nil
}
