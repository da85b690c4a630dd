package postgres

import (
	"context"

	"github.com/custody-mem/custody/witness"
)

var _ witness.Store = (*Store)(nil)

// WitnessStates returns what each witness holds of the log of origin,
// by witness verifier key.
func (s *Store) WitnessStates(ctx context.Context, origin string) (map[string]witness.State, error) {
	rows, err := s.pool.Query(ctx, `SELECT witness, size, cosigned, signature FROM witness_cosignatures WHERE origin = $1`, origin)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	out := map[string]witness.State{}
	for rows.Next() {
		var vkey, sig string
		var size, cosigned int64
		if err := rows.Scan(&vkey, &size, &cosigned, &sig); err != nil {
			return nil, classify(err)
		}
		out[vkey] = witness.State{Size: uint64(size), Cosigned: uint64(cosigned), Signature: sig}
	}
	return out, classify(rows.Err())
}

// SaveWitnessState records what the witness of vkey holds of the log of
// origin.
func (s *Store) SaveWitnessState(ctx context.Context, origin, vkey string, st witness.State) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO witness_cosignatures (origin, witness, size, cosigned, signature) VALUES ($1, $2, $3, $4, $5)
 ON CONFLICT (origin, witness) DO UPDATE SET size = excluded.size, cosigned = excluded.cosigned, signature = excluded.signature`,
		origin, vkey, int64(st.Size), int64(st.Cosigned), st.Signature)
	return classify(err)
}
