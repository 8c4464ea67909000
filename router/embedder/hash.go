package embedder

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
)

// HashDim is the dimension of the hashing embedder built by New.
const HashDim = 384

// Hash is the feature-hashing embedder: no model, no network, deterministic.
// Each text becomes a bag of weighted features (stemmed word unigrams, word
// bigrams over content words, character n-grams of each word padded with
// boundary markers), each feature is hashed with FNV-1a 64 to a signed bucket
// of a dim-float vector, and the vector is L2-normalised. A Hash is safe for
// concurrent use.
type Hash struct {
	name string
	dim  int
	p    hashParams
	pool sync.Pool // of *hashScratch
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

var defaultHashParams = hashParams{
	unigram:     1,
	stopUnigram: 0.2,
	stem:        true,
	bigram:      0.5,
	char:        1,
	stopChar:    1,
	charNorm:    0.5,
	charMin:     3,
	charMax:     5,
	hashes:      1,
}

// NewHash returns a hashing embedder of dimension dim; dim <= 0 means HashDim.
func NewHash(dim int) *Hash {
	if dim <= 0 {
		dim = HashDim
	}
	return newHashWith(dim, defaultHashParams)
}

func newHashWith(dim int, p hashParams) *Hash {
	return &Hash{name: NameHash, dim: dim, p: p}
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
	defer h.pool.Put(s)
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
	h.accumulate(s.feats, vec)
	if normalize(vec) == 0 {
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
// divided by the square root of their number so long words do not dominate.
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
	w := weight / float32(math.Pow(float64(count), float64(h.p.charNorm)))
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
// mean weight times 1+ln(tf).
func (h *Hash) accumulate(feats []feature, vec []float32) {
	slices.SortFunc(feats, func(a, b feature) int {
		switch {
		case a.h < b.h:
			return -1
		case a.h > b.h:
			return 1
		}
		return 0
	})
	for i := 0; i < len(feats); {
		j, sum := i, float32(0)
		for ; j < len(feats) && feats[j].h == feats[i].h; j++ {
			sum += feats[j].w
		}
		tf := j - i
		w := sum / float32(tf) * (1 + float32(math.Log(float64(tf))))
		hv := feats[i].h
		for range h.p.hashes {
			idx, sign := h.bucket(hv)
			vec[idx] += sign * w
			hv = mix64(hv + 0x9e3779b97f4a7c15)
		}
		i = j
	}
}

// bucket maps a feature hash to a vector index and a sign.
func (h *Hash) bucket(hv uint64) (int, float32) {
	hv = mix64(hv)
	idx := int((hv & 0xffffffff) * uint64(h.dim) >> 32)
	if hv>>63 == 1 {
		return idx, -1
	}
	return idx, 1
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

// normalize scales v to unit L2 length and returns its former length; a zero
// vector is left as it is.
func normalize(v []float32) float32 {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 {
		return 0
	}
	norm := math.Sqrt(ss)
	inv := 1 / norm
	for i := range v {
		v[i] = float32(float64(v[i]) * inv)
	}
	return float32(norm)
}
