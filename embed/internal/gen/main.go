// Command gen compacts WordNet 3.0 into the table the built-in embedder
// reads (embed/wordnet.gz): every single-word lemma with its synsets in
// sense-frequency order, each synset's related synsets (hypernyms,
// similar adjectives, derivations, pertainyms, see-also), and the
// morphological exception lists. Run it from embed/ with `go generate`
// on a machine that has WordNet's database files (Debian: apt-get install
// wordnet-base); the generated table is committed, so building custody
// never needs WordNet.
//
//	go run ./internal/gen -dict /usr/share/wordnet -out wordnet.gz
package main

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

var poses = []struct{ name, tag string }{{"noun", "n"}, {"verb", "v"}, {"adj", "a"}, {"adv", "r"}}

// related are the pointer symbols kept: hypernyms (@, @i) in one list,
// nearer relations in the other.
var (
	hyperPtrs = map[string]bool{"@": true, "@i": true}
	nearPtrs  = map[string]bool{"&": true, "+": true, "\\": true, "^": true, "=": true, "<": true}
)

type synset struct {
	hyper, near []int
}

func main() {
	dict := flag.String("dict", "/usr/share/wordnet", "directory of WordNet's database files")
	out := flag.String("out", "wordnet.gz", "table to write")
	flag.Parse()
	if err := run(*dict, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(dict, out string) error {
	ids := map[string]int{} // "n:offset" -> dense index
	var keys []string
	rels := map[string][2][]string{}
	glossDF := map[string]int{} // word -> number of glosses it occurs in
	for _, p := range poses {
		err := eachLine(filepath.Join(dict, "data."+p.name), func(line string, f []string) error {
			key := p.tag + ":" + f[0]
			ids[key] = len(keys)
			keys = append(keys, key)
			wc, err := strconv.ParseInt(f[3], 16, 32)
			if err != nil {
				return err
			}
			i := 4 + 2*int(wc)
			pc, err := strconv.Atoi(f[i])
			if err != nil {
				return err
			}
			var r [2][]string
			for j := 0; j < pc; j++ {
				sym, off, pos := f[i+1+4*j], f[i+2+4*j], f[i+3+4*j]
				if pos == "s" {
					pos = "a"
				}
				if hyperPtrs[sym] {
					r[0] = append(r[0], pos+":"+off)
				} else if nearPtrs[sym] {
					r[1] = append(r[1], pos+":"+off)
				}
			}
			rels[key] = r
			if g := strings.Index(line, " | "); g >= 0 {
				seen := map[string]bool{}
				for _, w := range wordRE.FindAllString(strings.ToLower(line[g+3:]), -1) {
					if !seen[w] {
						seen[w] = true
						glossDF[w]++
					}
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	syns := make([]synset, len(keys))
	for k, r := range rels {
		s := &syns[ids[k]]
		for _, x := range r[0] {
			s.hyper = append(s.hyper, ids[x])
		}
		for _, x := range r[1] {
			s.near = append(s.near, ids[x])
		}
	}
	type sense struct{ syn, rank int }
	lemmas := map[string][]sense{}
	for _, p := range poses {
		err := eachLine(filepath.Join(dict, "index."+p.name), func(_ string, f []string) error {
			if strings.Contains(f[0], "_") {
				return nil
			}
			n, _ := strconv.Atoi(f[2])
			offs := f[len(f)-n:]
			for r, o := range offs {
				lemmas[f[0]] = append(lemmas[f[0]], sense{ids[p.tag+":"+o], r})
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	counts := map[string]int{} // lemma -> tagged occurrences (SemCor)
	if err := eachLine(filepath.Join(dict, "cntlist.rev"), func(_ string, f []string) error {
		lemma := f[0][:strings.IndexByte(f[0], '%')]
		n, _ := strconv.Atoi(f[2])
		counts[lemma] += n
		return nil
	}); err != nil {
		return err
	}
	exc := map[string]string{}
	for _, p := range poses {
		if err := eachLine(filepath.Join(dict, p.name+".exc"), func(_ string, f []string) error {
			if len(f) >= 2 && !strings.Contains(f[0], "_") && !strings.Contains(f[1], "_") {
				if _, ok := exc[f[0]]; !ok {
					exc[f[0]] = f[1]
				}
			}
			return nil
		}); err != nil {
			return err
		}
	}

	var buf []byte
	uv := func(v int) { buf = binary.AppendUvarint(buf, uint64(v)) }
	str := func(s string) { uv(len(s)); buf = append(buf, s...) }
	buf = append(buf, "WNT2"...)
	uv(len(keys)) // glosses: the corpus of the document frequencies below
	uv(len(syns))
	for _, s := range syns {
		uv(len(s.hyper))
		for _, h := range s.hyper {
			uv(h)
		}
		uv(len(s.near))
		for _, h := range s.near {
			uv(h)
		}
	}
	names := make([]string, 0, len(lemmas))
	for l := range lemmas {
		names = append(names, l)
	}
	sort.Strings(names)
	uv(len(names))
	for _, l := range names {
		str(l)
		uv(counts[l])
		uv(glossFreq(glossDF, l))
		ss := lemmas[l]
		uv(len(ss))
		for _, s := range ss {
			uv(s.syn)
			uv(s.rank)
		}
	}
	forms := make([]string, 0, len(exc))
	for f := range exc {
		forms = append(forms, f)
	}
	sort.Strings(forms)
	uv(len(forms))
	for _, f := range forms {
		str(f)
		str(exc[f])
	}
	file, err := os.Create(out)
	if err != nil {
		return err
	}
	zw, err := gzip.NewWriterLevel(file, gzip.BestCompression)
	if err != nil {
		return err
	}
	if _, err := zw.Write(buf); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return file.Close()
}

// glossFreq is the number of glosses a lemma occurs in, as itself or with
// a regular inflection.
func glossFreq(df map[string]int, l string) int {
	n := df[l]
	for _, suf := range []string{"s", "es", "ed", "d", "ing"} {
		n += df[l+suf]
	}
	if strings.HasSuffix(l, "y") {
		n += df[l[:len(l)-1]+"ies"]
	}
	return n
}

var wordRE = regexp.MustCompile(`[\p{L}\p{N}]+`)

// eachLine calls fn with the space-separated fields of every line of a
// WordNet file that is not part of its licence header.
func eachLine(name string, fn func(string, []string) error) error {
	f, err := os.Open(name)
	if err != nil {
		return fmt.Errorf("%w (install WordNet 3.0, e.g. apt-get install wordnet-base, and pass -dict)", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == ' ' {
			continue
		}
		if err := fn(line, strings.Fields(line)); err != nil {
			return fmt.Errorf("%s: %q: %w", name, line, err)
		}
	}
	return sc.Err()
}
