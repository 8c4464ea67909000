package raftfsm

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// fullSortWalk is Graph as it was: each frontier concept's whole
// adjacency sorted (neighbours with no limit), then walked. E is how the
// edges come: the reference's Edge values, or the state's records.
func fullSortWalk[E comparable](req *GraphRequest, neighbours func(c string, min float64) []E,
	edge func(E) Edge) GraphResult {
	res := GraphResult{Edges: []Edge{}}
	seen := make(map[E]bool)
	visited := make(map[string]bool)
	var frontier []string
	for _, c := range req.Seeds {
		if !visited[c] {
			visited[c] = true
			frontier = append(frontier, c)
		}
	}
	for hop := 0; hop < req.Depth && len(frontier) > 0; hop++ {
		var next []string
		taken := 0
	walk:
		for _, c := range frontier {
			for _, e := range neighbours(c, req.MinWeight) {
				if seen[e] {
					continue
				}
				if taken == HopRowCap || len(res.Edges) == req.Limit {
					res.Truncated = true
					break walk
				}
				seen[e] = true
				taken++
				ed := edge(e)
				res.Edges = append(res.Edges, ed)
				for _, o := range [2]string{ed.A, ed.B} {
					if !visited[o] {
						visited[o] = true
						next = append(next, o)
					}
				}
			}
		}
		frontier = next
	}
	return res
}

// refWalk is fullSortWalk over the reference edges.
func refWalk(ref *refEdges, req *GraphRequest) GraphResult {
	return fullSortWalk(req, func(c string, min float64) []Edge { return ref.neighbours(c, min, 0) },
		func(e Edge) Edge { return e })
}

// TestGraphMatchesFullSort walks random graphs with hubs of far more than
// HopRowCap edges, many of equal weight, from random seeds with every
// depth, floor and limit, and wants the edges and truncation of the walk
// that sorts each concept's whole adjacency.
func TestGraphMatchesFullSort(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprintf("graph %d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 11))
			concepts := 200 + rng.IntN(800)
			name := func() string {
				if rng.IntN(3) == 0 {
					return fmt.Sprintf("hub%d", rng.IntN(4))
				}
				return fmt.Sprintf("c%03d", rng.IntN(concepts))
			}
			s := newEdgeSet()
			ref := &refEdges{adj: make(map[string]map[string]*Edge)}
			for step := range 3000 + rng.IntN(5000) {
				at := int64(step)
				if rng.IntN(2) == 0 {
					cs := make([]string, 2+rng.IntN(10))
					for i := range cs {
						cs[i] = name()
					}
					s.coactivateWithin(cs, at)
					cs = cs[:min(len(cs), maxEdgeConcepts)]
					for i := range cs {
						for j := i + 1; j < len(cs); j++ {
							ref.touch(cs[i], cs[j], writeEta, 0, false, at)
						}
					}
					continue
				}
				a, b := name(), name()
				eta := feedbackEta * float64(rng.IntN(3)) / 2
				s.touch(a, b, eta, 1, true, at)
				ref.touch(a, b, eta, 1, true, at)
			}
			if slices.Max(s.strong) <= HopRowCap {
				t.Fatalf("no concept has more than %d strong edges: the test misses the hop cap", HopRowCap)
			}
			truncated := 0
			for q := range 300 {
				req := &GraphRequest{Depth: 1 + rng.IntN(3),
					MinWeight: []float64{0, 0.05, 0.0975, 0.1, 0.2}[rng.IntN(5)],
					Limit:     []int{1, 2, 7, 64, 65, 100, 250, 251, 400, 500}[rng.IntN(10)]}
				for range 1 + rng.IntN(6) {
					req.Seeds = append(req.Seeds, name())
				}
				got, want := s.walk(req), refWalk(ref, req)
				if got.Truncated != want.Truncated || !sameEdges(got.Edges, want.Edges) {
					t.Fatalf("query %d %+v: got %d edges truncated %v, want %d truncated %v",
						q, req, len(got.Edges), got.Truncated, len(want.Edges), want.Truncated)
				}
				if got.Truncated {
					truncated++
				}
			}
			if truncated == 0 {
				t.Fatal("no walk was truncated")
			}
		})
	}
}
