package use

import (
	"context"
	"fmt"
	"math"

	"github.com/hebbdb/hebb/router/embedder"
)

// DefaultSemanticWeight is the share of the builtin embedder's cosine that
// comes from the semantic part; the rest comes from the hashing part.
// Chosen on bench/embedder_eval.go's two sets and checked on two held-out
// slices of the paraphrase file; see the package doc for the figures.
const DefaultSemanticWeight = 0.25

// LexicalDim is the dimension of the builtin embedder's hashing part: the
// 896 dimensions of the vector less the 128 of the projected semantic part.
// Hashing gains more from the extra width (fewer collisions) than the
// semantic part loses from keeping only its 128 main directions.
const LexicalDim = 768

// Embedder is the builtin embedder: the unit semantic vector scaled by
// sqrt(w), followed by the hashing embedder's unit vector (of dimension
// LexicalDim) scaled by sqrt(1-w), so the cosine of two texts is w times
// their semantic cosine plus 1-w times their hashing cosine, and every
// vector has unit length. It is safe for concurrent use.
type Embedder struct {
	m       *model
	hash    *embedder.Hash // nil when the weight is 1
	semDim  int
	wSem    float32 // sqrt(w)
	wHash   float32 // sqrt(1-w)
	hashDim int
}

// New returns the builtin embedder with DefaultSemanticWeight. It decodes
// the embedded assets on the first call; it fails only if they are corrupt.
func New() (*Embedder, error) {
	return NewWeighted(DefaultSemanticWeight)
}

// NewWeighted is New with another semantic weight w in (0, 1]; at 1 the
// vectors are the semantic part alone, of dimension 128.
func NewWeighted(w float64) (*Embedder, error) {
	if !(w > 0 && w <= 1) {
		return nil, fmt.Errorf("cannot weight the semantic part %v: %w", w, ErrBadWeight)
	}
	m, err := loadedAssets()
	if err != nil {
		return nil, err
	}
	e := &Embedder{m: m, semDim: m.dim(), wSem: float32(math.Sqrt(w))}
	if w < 1 {
		e.hash = embedder.NewHash(LexicalDim)
		e.hashDim = e.hash.Dim()
		e.wHash = float32(math.Sqrt(1 - w))
	}
	return e, nil
}

// Name returns "builtin".
func (e *Embedder) Name() string { return embedder.NameBuiltin }

// Version numbers the builtin embedder's vectors: 1 was the 512-d table at
// weight 0.4 beside 384 hashing dimensions, 2 the 128-d projection at
// weight 0.25 beside 768. A data dir records it (embedder.Identity).
const Version = 2

// Identity returns "builtin/2": a data dir made by another version of the
// builtin embedder is refused at start.
func (e *Embedder) Identity() string { return fmt.Sprintf("%s/%d", embedder.NameBuiltin, Version) }

// ScoreExponent calibrates search scores (embedder.Calibrated): the
// builtin embedder's cosines run low (`hebb bench embedder`: agent-memory
// paraphrases 0.17 at the median, unrelated pairs 0.13 at the 95th
// percentile, against 0.14 and 0.18 for hashing), so a search scores a
// cosine c as c^0.6. Unrelated pairs' 95th percentile then scores 0.30 — the
// default min_relevance admits about 5% of unrelated pairs, as with hashing
// — and the median paraphrase 0.35.
func (e *Embedder) ScoreExponent() float64 { return 0.6 }

// Dim returns the dimension of the vectors: 128 semantic plus LexicalDim
// hashing, 896.
func (e *Embedder) Dim() int { return e.semDim + e.hashDim }

// Tokenizer returns the model's tokenizer.
func (e *Embedder) Tokenizer() *Tokenizer { return e.m.tok }

// Embed returns one unit vector per text, in order. It fails only when ctx
// is done. The vectors share one backing array but cannot grow into each
// other.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	var hashed [][]float32
	if e.hash != nil {
		var err error
		if hashed, err = e.hash.Embed(ctx, texts); err != nil {
			return nil, err
		}
	}
	dim := e.Dim()
	out := make([][]float32, len(texts))
	arena := make([]float32, len(texts)*dim)
	s := e.m.scratch()
	defer e.m.pool.Put(s)
	for i, text := range texts {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("cannot embed %d texts: %w", len(texts), err)
			}
		}
		vec := arena[i*dim : (i+1)*dim : (i+1)*dim]
		e.m.embed(text, vec[:e.semDim], s)
		scale(vec[:e.semDim], e.wSem)
		if hashed != nil {
			for k, v := range hashed[i] {
				vec[e.semDim+k] = e.wHash * v
			}
		}
		out[i] = vec
	}
	return out, nil
}

func scale(v []float32, a float32) {
	if a == 1 {
		return
	}
	for k := range v {
		v[k] *= a
	}
}
