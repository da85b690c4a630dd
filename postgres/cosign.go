package postgres

import (
	"context"
	"errors"

	"github.com/custody-mem/custody/witness"
	"github.com/jackc/pgx/v5"
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

var _ witness.Published = (*Store)(nil)

// PublishedCheckpoint returns the newest checkpoint of the log of origin
// that met the witness policy, nil if none.
func (s *Store) PublishedCheckpoint(ctx context.Context, origin string) ([]byte, error) {
	var note []byte
	err := s.pool.QueryRow(ctx, `SELECT note FROM published_checkpoints WHERE origin = $1`, origin).Scan(&note)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	return note, classify(err)
}

// SavePublished records note, a checkpoint of size of the log of origin
// that met the witness policy, unless a larger one is recorded.
func (s *Store) SavePublished(ctx context.Context, origin string, size uint64, note []byte) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO published_checkpoints (origin, size, note) VALUES ($1, $2, $3)
 ON CONFLICT (origin) DO UPDATE SET size = excluded.size, note = excluded.note WHERE excluded.size >= published_checkpoints.size`,
		origin, int64(size), note)
	return classify(err)
}
