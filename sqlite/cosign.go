package sqlite

import (
	"context"

	"github.com/custody-mem/custody"
	"github.com/custody-mem/custody/witness"
)

var _ witness.Store = (*Store)(nil)

// WitnessStates returns what each witness holds of the log of origin,
// by witness verifier key.
func (s *Store) WitnessStates(ctx context.Context, origin string) (map[string]witness.State, error) {
	rows, err := s.reader().QueryContext(ctx, `SELECT witness, size, cosigned, signature FROM witness_cosignatures WHERE origin = ?`, origin)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]witness.State{}
	for rows.Next() {
		var vkey string
		var st witness.State
		if err := rows.Scan(&vkey, &st.Size, &st.Cosigned, &st.Signature); err != nil {
			return nil, err
		}
		out[vkey] = st
	}
	return out, rows.Err()
}

// SaveWitnessState records what the witness of vkey holds of the log of
// origin.
func (s *Store) SaveWitnessState(ctx context.Context, origin, vkey string, st witness.State) error {
	return s.Update(ctx, func(tx custody.Tx) error {
		return tx.(*txn).exec(ctx, `INSERT INTO witness_cosignatures (origin, witness, size, cosigned, signature) VALUES (?,?,?,?,?)
 ON CONFLICT (origin, witness) DO UPDATE SET size = excluded.size, cosigned = excluded.cosigned, signature = excluded.signature`,
			origin, vkey, st.Size, st.Cosigned, st.Signature)
	})
}
