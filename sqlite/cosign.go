package sqlite

import (
	"context"
	"database/sql"
	"errors"

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

var _ witness.Published = (*Store)(nil)

// PublishedCheckpoint returns the newest checkpoint of the log of origin
// that met the witness policy, nil if none.
func (s *Store) PublishedCheckpoint(ctx context.Context, origin string) ([]byte, error) {
	var note []byte
	err := s.reader().QueryRowContext(ctx, `SELECT note FROM published_checkpoints WHERE origin = ?`, origin).Scan(&note)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return note, err
}

// SavePublished records note, a checkpoint of size of the log of origin
// that met the witness policy, unless a larger one is recorded.
func (s *Store) SavePublished(ctx context.Context, origin string, size uint64, note []byte) error {
	return s.Update(ctx, func(tx custody.Tx) error {
		return tx.(*txn).exec(ctx, `INSERT INTO published_checkpoints (origin, size, note) VALUES (?,?,?)
 ON CONFLICT (origin) DO UPDATE SET size = excluded.size, note = excluded.note WHERE excluded.size >= published_checkpoints.size`,
			origin, size, note)
	})
}
