package raftfsm

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// refEdges is the plain reference of edgeSet: a map of maps and a full sort.
type refEdges struct {
	adj   map[string]map[string]*Edge
	count int
}

func (s *refEdges) touch(a, b string, eta, outcome float64, hasOutcome bool, at int64) *Edge {
	if a == b || a == "" || b == "" {
		return nil
	}
	if b < a {
		a, b = b, a
	}
	e := s.adj[a][b]
	if e == nil {
		e = &Edge{A: a, B: b}
		for _, p := range [2][2]string{{a, b}, {b, a}} {
			if s.adj[p[0]] == nil {
				s.adj[p[0]] = make(map[string]*Edge)
			}
			s.adj[p[0]][p[1]] = e
		}
		s.count++
	}
	e.Weight += float64(eta * (MaxWeight - e.Weight))
	if e.Weight > MaxWeight {
		e.Weight = MaxWeight
	}
	e.Count++
	if hasOutcome {
		e.Valence = clamp(e.Valence+float64(edgeValenceRate*(outcome-e.Valence)), -1, 1)
	}
	e.UpdatedAt = at
	return e
}

func (s *refEdges) neighbours(c string, min float64, limit int) []Edge {
	var out []Edge
	for _, e := range s.adj[c] {
		if e.Weight >= min {
			out = append(out, *e)
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

func (s *refEdges) sorted() []Edge {
	var out []Edge
	for a, m := range s.adj {
		for b, e := range m {
			if a < b {
				out = append(out, *e)
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

// view returns the edges of list with their names, as callers see them.
func (s *edgeSet) view(list []*edgeRec) []Edge {
	out := make([]Edge, len(list))
	for i, r := range list {
		out[i] = s.edge(r)
	}
	return out
}

// sameEdge reports whether the stored r is the reference's w.
func (s *edgeSet) sameEdge(r *edgeRec, w *Edge) bool {
	return (r == nil) == (w == nil) && (r == nil || s.edge(r) == *w)
}

func sameEdges(got, want []Edge) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}

// TestEdgeSetMatchesReference drives edgeSet and the reference with the same
// random touches (within-atom pairs, feedback with and without outcome, a
// few hubs with far more than edgeTop edges, rare shrinking weights) and
// compares every read, then a copy rebuilt by link as restore does.
func TestEdgeSetMatchesReference(t *testing.T) {
	tests := []struct {
		name     string
		concepts int
		hubs     bool
		shrink   bool
		steps    int
	}{
		{"few concepts", 12, false, false, 400},
		{"hubs past the top list", 400, true, false, 3000},
		{"weights that shrink", 150, true, true, 2000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(tc.concepts), 7))
			name := func() string {
				if tc.hubs && rng.IntN(3) == 0 {
					return fmt.Sprintf("hub%d", rng.IntN(3))
				}
				return fmt.Sprintf("c%03d", rng.IntN(tc.concepts))
			}
			got := newEdgeSet()
			ref := &refEdges{adj: make(map[string]map[string]*Edge)}
			for step := range tc.steps {
				at := int64(step)
				switch rng.IntN(4) {
				case 0, 1:
					concepts := make([]string, 1+rng.IntN(12))
					for i := range concepts {
						concepts[i] = name()
					}
					if rng.IntN(20) == 0 {
						concepts[0] = ""
					}
					got.coactivateWithin(concepts, at)
					if len(concepts) > maxEdgeConcepts {
						concepts = concepts[:maxEdgeConcepts]
					}
					for i := range concepts {
						for j := i + 1; j < len(concepts); j++ {
							ref.touch(concepts[i], concepts[j], writeEta, 0, false, at)
						}
					}
				default:
					a, b := name(), name()
					eta := feedbackEta * float64(rng.IntN(3)) / 2
					if tc.shrink && rng.IntN(10) == 0 {
						eta = -0.3
					}
					outcome := rng.Float64()*2 - 1
					has := rng.IntN(2) == 0
					e, w := got.touch(a, b, eta, outcome, has, at), ref.touch(a, b, eta, outcome, has, at)
					if !got.sameEdge(e, w) {
						t.Fatalf("step %d: touch(%q, %q) = %+v, want %+v", step, a, b, e, w)
					}
				}
			}
			checkEdges(t, &got, ref, rng, name)
			if tc.hubs && slices.Max(got.strong) <= edgeTop {
				t.Fatalf("no concept has more than %d strong edges: the test misses evictions", edgeTop)
			}
			restored := newEdgeSet()
			ix := buildPairs(&restored.pairs) // as a restore does
			for _, e := range got.sorted() {
				a, b := restored.concepts.intern(e.A), restored.concepts.intern(e.B)
				ix.put(pairKey(a, b), restored.link(a, b,
					edgeRec{Weight: e.Weight, Count: e.Count, Valence: e.Valence, UpdatedAt: e.UpdatedAt}))
			}
			ix.wait()
			checkEdges(t, &restored, ref, rng, name)
		})
	}
}

func checkEdges(t *testing.T, got *edgeSet, ref *refEdges, rng *rand.Rand, name func() string) {
	t.Helper()
	if got.count != ref.count {
		t.Fatalf("count %d, want %d", got.count, ref.count)
	}
	if g, w := got.sorted(), ref.sorted(); !sameEdges(g, w) {
		t.Fatalf("sorted edges differ: %d vs %d", len(g), len(w))
	}
	for range 500 {
		a, b := name(), name()
		if e, w := got.get(a, b), ref.adj[a][b]; !got.sameEdge(e, w) {
			t.Fatalf("get(%q, %q) = %+v, want %+v", a, b, e, w)
		}
		min := []float64{0, 0.05, 0.1, 0.3, 2}[rng.IntN(5)]
		limit := []int{0, 1, 3, 10, edgeTop, edgeTop + 1, 500}[rng.IntN(7)]
		g, w := got.view(got.neighbours(a, min, limit)), ref.neighbours(a, min, limit)
		if !sameEdges(g, w) {
			t.Fatalf("neighbours(%q, %v, %d):\n got %v\nwant %v", a, min, limit, g, w)
		}
	}
	if n := got.neighbours("absent", 0, 0); len(n) != 0 {
		t.Fatalf("neighbours of an unknown concept: %v", n)
	}
}

// TestEdgeSlabPointersStable checks that edges keep their address as the
// slab grows through its doubling chunks and past them.
func TestEdgeSlabPointersStable(t *testing.T) {
	s := newEdgeSet()
	var first []*edgeRec
	for i := range 3000 {
		first = append(first, s.touch("a", fmt.Sprintf("b%05d", i), writeEta, 0, false, 1))
	}
	for i, e := range first {
		if got := s.get("a", fmt.Sprintf("b%05d", i)); got != e || s.edge(e).B != fmt.Sprintf("b%05d", i) {
			t.Fatalf("edge %d moved or changed: %p %+v, want %p", i, got, got, e)
		}
	}
}

// sorted returns the edges in snapshot order (by the names of A, then B),
// as a snapshot's encoder sees them.
func (s *edgeSet) sorted() []Edge {
	recs := s.freeze(false, nil).sorted()
	out := make([]Edge, len(recs))
	for i := range recs {
		out[i] = s.edge(&recs[i])
	}
	return out
}

// sorted copies the rows ordered by the names of A, then B, as a snapshot
// writes them (order).
func (fe frozenEdges) sorted() []edgeRec {
	recs := make([]edgeRec, 0, fe.count)
	for _, n := range fe.order() {
		recs = append(recs, *fe.at(n))
	}
	return recs
}
