package raftfsm

import "sort"

// Hebbian learning constants (DESIGN.md §4).
const (
	MaxWeight       = 1.0
	writeEta        = 0.05 // within-atom co-activation increment
	feedbackEta     = 0.2  // cross-atom co-activation rate, scaled by |outcome|
	edgeValenceRate = 0.3
	maxEdgeConcepts = 8 // concepts of one atom that take part in within-atom edges
)

// Edge is one undirected association row between two concepts, stored once
// with A < B.
type Edge struct {
	A, B      string
	Weight    float64
	Count     int64
	Valence   float64
	UpdatedAt int64 // unix microseconds
}

type edgeSet struct {
	adj   map[string]map[string]*Edge
	count int
}

func newEdgeSet() edgeSet { return edgeSet{adj: make(map[string]map[string]*Edge)} }

func (s *edgeSet) get(a, b string) *Edge {
	return s.adj[a][b]
}

// touch reinforces the (a, b) row: w ← w + eta·(max − w), valence moves
// toward outcome at edgeValenceRate·|eta-scale| when hasOutcome.
func (s *edgeSet) touch(a, b string, eta, outcome float64, hasOutcome bool, at int64) *Edge {
	if a == b || a == "" || b == "" {
		return nil
	}
	if b < a {
		a, b = b, a
	}
	e := s.get(a, b)
	if e == nil {
		e = &Edge{A: a, B: b}
		s.link(e)
	}
	// The explicit float64 conversions round each product, so no
	// architecture fuses it into an FMA and replicas stay bit-identical.
	e.Weight += float64(eta * (MaxWeight - e.Weight))
	if e.Weight > MaxWeight {
		e.Weight = MaxWeight
	}
	e.Count++
	if hasOutcome {
		e.Valence += float64(edgeValenceRate * (outcome - e.Valence))
		e.Valence = clamp(e.Valence, -1, 1)
	}
	e.UpdatedAt = at
	return e
}

func (s *edgeSet) link(e *Edge) {
	for _, p := range [2][2]string{{e.A, e.B}, {e.B, e.A}} {
		m := s.adj[p[0]]
		if m == nil {
			m = make(map[string]*Edge)
			s.adj[p[0]] = m
		}
		m[p[1]] = e
	}
	s.count++
}

// neighbours returns the edges touching c with weight at least min, sorted
// by weight descending then by the other concept, so every caller sees a
// deterministic order; at most limit of them when limit > 0. Filtering before
// sorting keeps a frequent concept's long adjacency cheap to read.
func (s *edgeSet) neighbours(c string, min float64, limit int) []*Edge {
	m := s.adj[c]
	out := make([]*Edge, 0, min64(len(m), 64))
	for _, e := range m {
		if e.Weight >= min {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Weight != out[j].Weight {
			return out[i].Weight > out[j].Weight
		}
		if out[i].A != out[j].A {
			return out[i].A < out[j].A
		}
		return out[i].B < out[j].B
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

// sorted returns every edge ordered by (A, B).
func (s *edgeSet) sorted() []*Edge {
	out := make([]*Edge, 0, s.count)
	for a, m := range s.adj {
		for b, e := range m {
			if a < b {
				out = append(out, e)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].A != out[j].A {
			return out[i].A < out[j].A
		}
		return out[i].B < out[j].B
	})
	return out
}

// coactivateWithin adds the small within-atom increment for every pair of an
// atom's first concepts.
func (s *edgeSet) coactivateWithin(concepts []string, at int64) {
	if len(concepts) > maxEdgeConcepts {
		concepts = concepts[:maxEdgeConcepts]
	}
	for i := 0; i < len(concepts); i++ {
		for j := i + 1; j < len(concepts); j++ {
			s.touch(concepts[i], concepts[j], writeEta, 0, false, at)
		}
	}
}

func clamp(v, lo, hi float64) float64 {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}

func min64(a, b int) int {
	if a < b {
		return a
	}
	return b
}
