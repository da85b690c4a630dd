package custody

import "context"

// MaxProofIndexes bounds the leaves of one InclusionProofs call.
const MaxProofIndexes = 1000

// InclusionProofs proves that each leaf of indexes is in the tree of the
// given size of tenant's log: one proof per index, in the order of indexes (see
// InclusionProof). An auditor checking many entries asks once rather
// than once per entry.
func (s *Service) InclusionProofs(ctx context.Context, tenant string, indexes []uint64, size uint64) ([][][]byte, error) {
	if len(indexes) == 0 || len(indexes) > MaxProofIndexes {
		return nil, invalid("indexes", "give 1 to %d leaf indexes, not %d", MaxProofIndexes, len(indexes))
	}
	out := make([][][]byte, len(indexes))
	for i, index := range indexes {
		p, err := s.InclusionProof(ctx, tenant, index, size)
		if err != nil {
			return nil, err
		}
		out[i] = p
	}
	return out, nil
}
