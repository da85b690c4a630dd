package canon

import "math/big"

// The English number words.
var (
	unitWords = map[string]int64{
		"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
		"ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
		"seventeen": 17, "eighteen": 18, "nineteen": 19,
		"twenty": 20, "thirty": 30, "forty": 40, "fourty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
	}
	scaleWords = map[string]int64{"thousand": 1e3, "lakh": 1e5, "lakhs": 1e5, "million": 1e6, "crore": 1e7, "crores": 1e7, "billion": 1e9}
)

// maxNumberWords bounds the words one number is read from.
const maxNumberWords = 48

// wordNumbers lists the numbers folded text writes in English words: each
// longest sequence of number words, which may be joined by spaces,
// hyphens and "and" ("one hundred and twenty-five", "four thousand nine
// hundred", "two million"), read as a reader would.
func wordNumbers(f string) []string {
	var out []string
	var seq []string
	counted := false // seq holds a unit word: a scale alone ("thousand", after digits) is no number
	flush := func() {
		for len(seq) > 0 && seq[len(seq)-1] == "and" {
			seq = seq[:len(seq)-1]
		}
		if counted {
			out = append(out, readWords(seq))
		}
		seq, counted = seq[:0], false
	}
	article := false // the previous word was "a", and no number had begun
	eachWord(f, func(w string) {
		a := article
		article = false
		switch {
		case w == "":
			flush() // punctuation other than a hyphen ends a number
		case a && len(seq) == 0 && (w == "hundred" || scaleWords[w] > 0):
			seq, counted = append(seq, "one", w), true // "a thousand"
		case isNumberWord(w):
			if len(seq) >= maxNumberWords {
				flush()
			}
			_, unit := unitWords[w]
			seq, counted = append(seq, w), counted || unit
		case w == "and" && len(seq) > 0:
			seq = append(seq, w)
		default:
			flush()
			article = w == "a"
		}
	})
	flush()
	return out
}

// eachWord calls fn with each ASCII word of folded text, in order, and
// with "" for every mark that ends a number (anything but spaces, line
// breaks and hyphens between words).
func eachWord(f string, fn func(string)) {
	start := -1
	for i := 0; i <= len(f); i++ {
		c := byte(' ')
		if i < len(f) {
			c = f[i]
		}
		if 'a' <= c && c <= 'z' {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			fn(f[start:i])
			start = -1
		}
		if c != ' ' && c != '-' && c != '\n' && c != '\t' && c != '\r' {
			fn("")
		}
	}
}

func isNumberWord(w string) bool {
	_, unit := unitWords[w]
	_, scale := scaleWords[w]
	return unit || scale || w == "hundred"
}

// readWords reads a sequence of number words: units and tens add up,
// "hundred" multiplies what came since the last scale, and a scale word
// closes a group ("four thousand nine hundred" is 4,900).
func readWords(seq []string) string {
	total, group := new(big.Int), new(big.Int)
	one := big.NewInt(1)
	atLeastOne := func(x *big.Int) *big.Int {
		if x.Sign() == 0 {
			return one
		}
		return x
	}
	for _, w := range seq {
		switch {
		case w == "and":
		case w == "hundred":
			group = new(big.Int).Mul(atLeastOne(group), big.NewInt(100))
		case scaleWords[w] > 0:
			total.Add(total, new(big.Int).Mul(atLeastOne(group), big.NewInt(scaleWords[w])))
			group = new(big.Int)
		default:
			group.Add(group, big.NewInt(unitWords[w]))
		}
	}
	return total.Add(total, group).String()
}
