package embedder

import (
	"context"
	"fmt"
)

// Embedder turns texts into L2-normalised float32 vectors of a fixed dimension.
type Embedder interface {
	Name() string // "hash" for the hashing embedder
	Dim() int
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Versioned is implemented by embedders whose vectors changed between
// releases under the same name: Identity is what a data dir records, the
// name then "/" and a version ("builtin/2"), so a data dir made by another
// version is refused instead of mixing incompatible vectors.
type Versioned interface {
	Identity() string
}

// Identity is what a data dir records for e: its Identity when it is
// Versioned, else its Name.
func Identity(e Embedder) string {
	if v, ok := e.(Versioned); ok {
		return v.Identity()
	}
	return e.Name()
}

// Calibrated is implemented by embedders whose cosines run low, so that
// min_relevance keeps its meaning: a search scores a cosine c as
// sign(c)·|c|^ScoreExponent() (raftfsm.ReadRequest.Calibration).
type Calibrated interface {
	ScoreExponent() float64
}

// ScoreExponent is e's ScoreExponent when it is Calibrated, else 1 (the
// cosine itself).
func ScoreExponent(e Embedder) float64 {
	if c, ok := e.(Calibrated); ok {
		return c.ScoreExponent()
	}
	return 1
}

// Names accepted by New.
const (
	NameHash    = "hash"
	NameBuiltin = "builtin"
)

// New picks an embedder by name: "hash" is the feature-hashing embedder of
// dimension HashDim; "builtin" is, for now, the same hashing embedder under the
// name "builtin" (a semantic model replaces it later). Any other name yields
// ErrUnknownEmbedder.
func New(name string) (Embedder, error) {
	switch name {
	case NameHash:
		return NewHash(HashDim), nil
	case NameBuiltin:
		h := NewHash(HashDim)
		h.name = NameBuiltin
		return h, nil
	default:
		return nil, fmt.Errorf("cannot create embedder %q: %w", name, ErrUnknownEmbedder)
	}
}
