package embedder

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"strings"
	"sync"

	"github.com/hebbdb/hebb/vecmath"
)

// HashDim is the dimension of the hashing embedder built by New.
const HashDim = 384

// Hash is the feature-hashing embedder: no model, no network, deterministic.
// Each text becomes a bag of weighted features (stemmed word unigrams, word
// bigrams over content words, character n-grams of each word padded with
// boundary markers), each feature is hashed with FNV-1a 64 to signed buckets
// of a dim-float vector, and the vector is L2-normalised. A Hash is safe for
// concurrent use.
type Hash struct {
	name string
	dim  int
	p    hashParams
	pool sync.Pool // of *hashScratch

	// Precomputed factors: countNorm[c] = c^-charNorm, tfBoost[tf] = 1+ln(tf).
	countNorm [64]float32
	tfBoost   [32]float32
}

// hashParams are the feature weights, tuned on the paraphrase evaluation
// (eval_test.go).
type hashParams struct {
	unigram     float32 // content word unigram
	stopUnigram float32 // stop word unigram
	stem        bool    // unigrams hashed by their stem
	bigram      float32 // bigram of consecutive content words
	char        float32 // content word character n-gram, before division by count^charNorm
	stopChar    float32 // stop word character n-gram, likewise
	charNorm    float32 // exponent of the word's n-gram count dividing the n-gram weight
	charMin     int     // shortest character n-gram, boundary markers included
	charMax     int     // longest character n-gram
	hashes      int     // buckets each feature is added to
}

// defaultHashParams came out of a coordinate search on 20,000 pairs (four
// corpora of 5,000). What mattered: character 3-4-grams outweighing whole
// words (archaic and modern spellings share them), character n-grams of stop
// words kept at full weight while their unigrams stay low, n-gram weight
// divided by count^0.25 only, and three buckets per feature (fewer collision
// losses). Bigrams and stemming barely moved the figures; stemming stays for
// inflected queries. Differences below about 0.02 in low-overlap nDCG@10 are
// within the noise of the hash itself (a different seed moves it that much).
var defaultHashParams = hashParams{
	unigram:     1,
	stopUnigram: 0.3,
	stem:        true,
	bigram:      0.2,
	char:        1.5,
	stopChar:    1,
	charNorm:    0.25,
	charMin:     3,
	charMax:     4,
	hashes:      3,
}

// NewHash returns a hashing embedder of dimension dim; dim <= 0 means HashDim.
func NewHash(dim int) *Hash {
	if dim <= 0 {
		dim = HashDim
	}
	return newHashWith(dim, defaultHashParams)
}

func newHashWith(dim int, p hashParams) *Hash {
	h := &Hash{name: NameHash, dim: dim, p: p}
	for c := 1; c < len(h.countNorm); c++ {
		h.countNorm[c] = countNorm(c, p.charNorm)
	}
	for tf := 1; tf < len(h.tfBoost); tf++ {
		h.tfBoost[tf] = tfBoost(tf)
	}
	return h
}

func countNorm(count int, exp float32) float32 {
	return float32(1 / math.Pow(float64(count), float64(exp)))
}

func tfBoost(tf int) float32 {
	return 1 + float32(math.Log(float64(tf)))
}

// Name returns "hash", or "builtin" when New built it under that name.
func (h *Hash) Name() string { return h.name }

// Dim returns the dimension of the vectors Embed returns.
func (h *Hash) Dim() int { return h.dim }

// Embed returns one unit vector per text, in order. It fails only when ctx is
// done. The vectors share one backing array but cannot grow into each other.
func (h *Hash) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	arena := make([]float32, len(texts)*h.dim)
	s := h.scratch()
	defer h.release(s)
	for i, text := range texts {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("cannot embed %d texts: %w", len(texts), err)
			}
		}
		vec := arena[i*h.dim : (i+1)*h.dim : (i+1)*h.dim]
		h.embedOne(text, vec, s)
		out[i] = vec
	}
	return out, nil
}

// hashScratch holds the buffers of one embedding, reused through the pool.
type hashScratch struct {
	tok     tokenScan
	content []string // content words, in order, for bigrams
	runes   []rune   // a word padded with boundary markers
	feats   []feature
	table   featureTable
}

// feature is one hashed feature and its weight before term-frequency damping.
type feature struct {
	h uint64
	w float32
}

func (h *Hash) scratch() *hashScratch {
	if s, ok := h.pool.Get().(*hashScratch); ok {
		return s
	}
	return &hashScratch{}
}

// maxPooledFeatures bounds the scratch kept for reuse, so one huge text does
// not pin megabytes of buffers in the pool.
const maxPooledFeatures = 1 << 15

func (h *Hash) release(s *hashScratch) {
	if cap(s.feats) > maxPooledFeatures {
		return
	}
	h.pool.Put(s)
}

// Feature kinds seed the hash so that equal strings of different kinds land in
// different buckets.
const (
	kindUnigram byte = 'u'
	kindBigram  byte = 'b'
	kindChar    byte = 'c'
	kindRaw     byte = 'r'
)

// embedOne writes the unit vector of text into vec, which must be zeroed.
func (h *Hash) embedOne(text string, vec []float32, s *hashScratch) {
	s.feats = s.feats[:0]
	s.content = s.content[:0]
	s.tok.scan(text)
	all := string(s.tok.buf)
	for i := range s.tok.ends {
		h.wordFeatures(s, s.tok.token(all, i))
	}
	h.bigramFeatures(s)
	h.accumulate(s, vec)
	if vecmath.Normalize(vec) == 0 {
		// No features (only punctuation, say) or features that cancelled:
		// fall back to the raw text so the vector is still a unit vector.
		clear(vec)
		hv := fnvString(fnvByte(fnvOffset, kindRaw), strings.ToLower(text))
		idx, sign := h.bucket(hv)
		vec[idx] = sign
	}
}

// wordFeatures appends the unigram and character n-gram features of one word
// and records content words for bigrams.
func (h *Hash) wordFeatures(s *hashScratch, word string) {
	stop := IsStopWord(word)
	w := h.p.unigram
	if stop {
		w = h.p.stopUnigram
	}
	if w > 0 {
		keep, add := len(word), ""
		if h.p.stem {
			keep, add = stemSplit(word)
		}
		hv := fnvString(fnvString(fnvByte(fnvOffset, kindUnigram), word[:keep]), add)
		s.feats = append(s.feats, feature{hv, w})
	}
	if !stop {
		s.content = append(s.content, word)
	}
	cw := h.p.char
	if stop {
		cw = h.p.stopChar
	}
	if cw > 0 {
		h.charFeatures(s, word, cw)
	}
}

// charFeatures appends the character n-grams of "<word>"; their weight is
// divided by their number to the power charNorm so long words do not dominate.
func (h *Hash) charFeatures(s *hashScratch, word string, weight float32) {
	s.runes = append(s.runes[:0], '<')
	for _, r := range word {
		s.runes = append(s.runes, r)
	}
	s.runes = append(s.runes, '>')
	count := 0
	for n := h.p.charMin; n <= h.p.charMax; n++ {
		count += max(len(s.runes)-n+1, 0)
	}
	if count == 0 {
		return
	}
	var norm float32
	if count < len(h.countNorm) {
		norm = h.countNorm[count] // a power costs more than the word's n-grams
	} else {
		norm = countNorm(count, h.p.charNorm)
	}
	w := weight * norm
	for n := h.p.charMin; n <= h.p.charMax; n++ {
		for i := 0; i+n <= len(s.runes); i++ {
			hv := fnvByte(fnvOffset, kindChar)
			for _, r := range s.runes[i : i+n] {
				hv = fnvRune(hv, r)
			}
			s.feats = append(s.feats, feature{hv, w})
		}
	}
}

// bigramFeatures appends a feature per pair of consecutive content words.
func (h *Hash) bigramFeatures(s *hashScratch) {
	if h.p.bigram <= 0 {
		return
	}
	for i := 1; i < len(s.content); i++ {
		hv := fnvString(fnvByte(fnvOffset, kindBigram), s.content[i-1])
		hv = fnvString(fnvByte(hv, ' '), s.content[i])
		s.feats = append(s.feats, feature{hv, h.p.bigram})
	}
}

// accumulate sums the features into vec: a feature seen tf times weighs its
// mean weight times 1+ln(tf). Equal features are merged in a small
// open-addressing table, visited in first-seen order so the float sums, and
// so the vector, are the same on every run.
func (h *Hash) accumulate(s *hashScratch, vec []float32) {
	t := &s.table
	t.reset(len(s.feats))
	for _, f := range s.feats {
		t.add(f)
	}
	for _, slot := range t.order {
		e := &t.slots[slot]
		w := e.sum
		if e.tf > 1 {
			var boost float32
			if int(e.tf) < len(h.tfBoost) {
				boost = h.tfBoost[e.tf]
			} else {
				boost = tfBoost(int(e.tf))
			}
			w = e.sum / float32(e.tf) * boost
		}
		hv := e.h
		for range h.p.hashes {
			idx, sign := h.bucket(hv)
			vec[idx] += sign * w
			hv = mix64(hv + 0x9e3779b97f4a7c15)
		}
	}
}

// featureTable merges equal feature hashes; it lives in the scratch and is
// reused.
type featureTable struct {
	slots []tableSlot
	order []int32 // used slots, in first-seen order
	mask  uint64
	shift uint // 64 - log2(len(slots)): a hash's top bits pick its slot
}

type tableSlot struct {
	h   uint64
	sum float32
	tf  int32 // 0 marks a free slot
}

// reset empties the table and sizes it for n features at most half full.
func (t *featureTable) reset(n int) {
	size := 16
	for size < 2*n {
		size *= 2
	}
	if cap(t.slots) < size {
		t.slots = make([]tableSlot, size)
	} else { // a smaller text before may have shortened it: reuse the room
		t.slots = t.slots[:size]
		clear(t.slots)
	}
	t.mask = uint64(size - 1)
	t.shift = uint(64 - bits.TrailingZeros(uint(size)))
	t.order = t.order[:0]
}

// add merges f into its slot. The slot is the top bits of the hash times
// an odd constant (Fibonacci hashing: one multiply where the splitmix
// finaliser takes two and three shifts); slots only group equal hashes,
// and the order the vector is summed in is t.order's, so any spread works.
func (t *featureTable) add(f feature) {
	i := (f.h * 0x9e3779b97f4a7c15) >> t.shift
	for {
		e := &t.slots[i]
		switch {
		case e.tf == 0:
			*e = tableSlot{h: f.h, sum: f.w, tf: 1}
			t.order = append(t.order, int32(i))
			return
		case e.h == f.h:
			e.sum += f.w
			e.tf++
			return
		}
		i = (i + 1) & t.mask
	}
}

// bucket maps a feature hash to a vector index and a sign: -1 when the
// mixed hash's top bit is set, else 1. The sign is built from that bit, not
// chosen by a branch: it is random, and a branch on it mispredicted half the
// time (a fifth of embedding a text of distinct words).
func (h *Hash) bucket(hv uint64) (int, float32) {
	hv = mix64(hv)
	idx := int((hv & 0xffffffff) * uint64(h.dim) >> 32)
	const one = 0x3f800000 // the bits of float32(1)
	return idx, math.Float32frombits(one | uint32(hv>>63)<<31)
}

// FNV-1a 64.
const (
	fnvOffset uint64 = 14695981039346656037
	fnvPrime  uint64 = 1099511628211
)

func fnvByte(h uint64, b byte) uint64 {
	return (h ^ uint64(b)) * fnvPrime
}

func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h
}

func fnvRune(h uint64, r rune) uint64 {
	return (h ^ uint64(uint32(r))) * fnvPrime
}

// mix64 is the splitmix64 finaliser; it spreads FNV's weak low bits before
// the bucket and sign are taken.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
