package bench

import (
	"math/rand/v2"
	"strconv"
	"strings"
)

// Text streams: each workload draws its texts from its own stream so that,
// for one seed, populated atoms, written atoms and queries never coincide.
const (
	StreamPopulate uint64 = 1
	StreamWrite    uint64 = 2
	StreamQuery    uint64 = 3
	// StreamTenant + t is the populate stream of tenant t.
	StreamTenant uint64 = 1 << 32
)

const (
	vocabSize = 4000
	vocabSeed = 0x6865626221 // fixed: the vocabulary never depends on --seed
	minWords  = 8
	maxWords  = 30
)

var (
	onsets  = []string{"b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z", "br", "ch", "cl", "dr", "gr", "pl", "sh", "st", "th", "tr"}
	vowels  = []string{"a", "e", "i", "o", "u", "ai", "ea", "io", "ou"}
	codas   = []string{"", "", "", "n", "r", "s", "t", "l", "m", "nd", "st", "rk"}
	numbers = []string{"v%d", "%d", "%d%%", "#%d", "%dms", "%dgb", "port %d"}
)

// TextGen makes varied synthetic memory texts from a seeded vocabulary of a
// few thousand pseudo-words plus numbers: 8 to 30 words each, word choice
// mostly Zipf-distributed (a few common words, a long tail) like real notes.
// Texts are distinct enough that the write gate stores them. A TextGen is
// immutable and safe for concurrent use.
type TextGen struct {
	seed  uint64
	vocab []string
	// domains, when > 0, puts text i of every stream in domain
	// bench-d<i mod domains>, so writes land in the populated domains
	// (see domainOf).
	domains uint64
}

// NewTextGen returns the generator of the given seed.
func NewTextGen(seed uint64) *TextGen {
	return &TextGen{seed: seed, vocab: vocabulary(vocabSize)}
}

// vocabulary builds n distinct pronounceable pseudo-words, always the same.
func vocabulary(n int) []string {
	rng := rand.New(rand.NewPCG(vocabSeed, vocabSeed))
	seen := make(map[string]bool, n)
	out := make([]string, 0, n)
	var b strings.Builder
	for len(out) < n {
		b.Reset()
		syllables := 1 + rng.IntN(2)
		if rng.IntN(5) == 0 {
			syllables++
		}
		for ; syllables > 0; syllables-- {
			b.WriteString(onsets[rng.IntN(len(onsets))])
			b.WriteString(vowels[rng.IntN(len(vowels))])
			b.WriteString(codas[rng.IntN(len(codas))])
		}
		if w := b.String(); len(w) >= 3 && !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// rng returns the random source of item i of a stream.
func (g *TextGen) rng(stream, i uint64) *rand.Rand {
	return rand.New(rand.NewPCG(g.seed^stream*0x9e3779b97f4a7c15, i))
}

// words returns the words of item i of a stream.
func (g *TextGen) words(stream, i uint64) []string {
	rng := g.rng(stream, i)
	zipf := rand.NewZipf(rng, 1.1, 4, uint64(len(g.vocab)-1))
	n := minWords + rng.IntN(maxWords-minWords+1)
	out := make([]string, n)
	for k := range out {
		switch r := rng.IntN(100); {
		case r < 8:
			out[k] = number(rng)
		case r < 70:
			out[k] = g.vocab[zipf.Uint64()]
		default:
			out[k] = g.vocab[rng.IntN(len(g.vocab))]
		}
	}
	return out
}

func number(rng *rand.Rand) string {
	f := numbers[rng.IntN(len(numbers))]
	return strings.Replace(f, "%d", strconv.Itoa(rng.IntN(10000)), 1)
}

// Text returns item i of a stream: the same (seed, stream, i) always gives
// the same text.
func (g *TextGen) Text(stream, i uint64) string {
	return strings.Join(g.words(stream, i), " ")
}

// Query returns query i: a window of 3 to 8 consecutive words of a text drawn
// from the first n items of stream (so that searches find what was stored),
// or a fresh short text when n is 0.
func (g *TextGen) Query(stream, n, i uint64) string {
	rng := g.rng(StreamQuery^stream<<1, i)
	if n == 0 {
		return strings.Join(g.words(StreamQuery, i)[:minWords/2], " ")
	}
	w := g.words(stream, rng.Uint64N(n))
	size := min(3+rng.IntN(6), len(w))
	at := rng.IntN(len(w) - size + 1)
	return strings.Join(w[at:at+size], " ")
}
