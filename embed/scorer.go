package embed

import "math"

// Termer is implemented by an embedder whose vectors are sums of word
// vectors (Builtin): a query is then scored word by word (TermScorer),
// with each word weighted by how rare it is among the records scanned.
type Termer interface {
	// Terms are the words of text that carry meaning, in order.
	Terms(text string) []string
}

// Term scoring settings, measured on the LoCoMo development conversations
// (docs/search.md): a record "has" a query word when their similarity
// exceeds termPresence; a word's weight is its BM25 inverse document
// frequency over the records scanned; a record's similarity to a word
// saturates as x(1+termSaturation)/(x+termSaturation).
const (
	termPresence   = 0.1
	termSaturation = 0.3
)

// TermScorer ranks stored vectors against a query of one vector (by
// cosine similarity) or of several word vectors (by the sum over the
// words of the word's rarity times the record's saturated similarity to
// it: a soft BM25, where a synonym counts as a match). Add every eligible
// record's vector, then ask for the Top.
type TermScorer[T any] struct {
	terms [][]float32
	ids   []T
	sims  []float32 // len(terms) per id
	df    []int
	n     int // records the rarity is counted over, at least those added
}

// NewTermScorer scores against the query vectors terms.
func NewTermScorer[T any](terms [][]float32) *TermScorer[T] {
	return &TermScorer[T]{terms: terms, df: make([]int, len(terms))}
}

// Add scores one stored vector (Quantize encoding); a vector of another
// dimension is ErrQuantized.
func (s *TermScorer[T]) Add(id T, vec []byte) error {
	start := len(s.sims)
	for _, t := range s.terms {
		sim, err := DotQuantized(t, vec)
		if err != nil {
			s.sims = s.sims[:start]
			return err
		}
		s.sims = append(s.sims, sim)
	}
	s.added(id, start)
	return nil
}

// added counts the record id whose similarities to the query vectors
// were appended to s.sims from start.
func (s *TermScorer[T]) added(id T, start int) {
	for i, sim := range s.sims[start:] {
		if sim > termPresence {
			s.df[i]++
		}
	}
	s.ids = append(s.ids, id)
}

// Corpus sets how many records the words' rarity is counted over when
// the vectors added are candidates, not every record: each word's inverse
// document frequency is then as among n records, of which the candidates
// holding the word are those that have it.
func (s *TermScorer[T]) Corpus(n int) { s.n = n }

// Top returns the k best with a positive score, best first, with their
// scores.
func (s *TermScorer[T]) Top(k int) ([]T, []float32) {
	n, nt := len(s.ids), len(s.terms)
	corpus := float64(max(n, s.n))
	weights := make([]float32, nt)
	for i, df := range s.df {
		weights[i] = float32(math.Log(1 + (corpus-float64(df)+0.5)/(float64(df)+0.5)))
	}
	top := NewNearest[int](k)
	for d := range n {
		row := s.sims[d*nt : (d+1)*nt]
		var score float32
		if nt == 1 {
			score = row[0]
		} else {
			for i, x := range row {
				if x > 0 {
					score += weights[i] * x * (1 + termSaturation) / (x + termSaturation)
				}
			}
		}
		if score > 0 { // nothing in common is no match
			top.Offer(d, score)
		}
	}
	return ranked(top, s.ids)
}
