package postgres

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
	tag, err := t.tx.Exec(ctx, `UPDATE principals SET roles = $1, channels = $2, groups_ = $3, token_hash = $4, sealed_key = $5
 WHERE tenant = $6 AND name = $7`, nonNil(p.Roles), nonNil(p.Channels), nonNil(p.Groups), tokenHash, sealedKey, p.Tenant, p.Name)
	if err != nil {
		return classify(err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("updating principal %s: %d rows", p.ID(), tag.RowsAffected())
	}
	return nil
}
