package raftfsm

import (
	"testing"

	"github.com/hebbdb/hebb/bench"
	"github.com/hebbdb/hebb/router/embedder"
)

// BenchmarkEdgesWithin adds the within-atom edges of 50k texts of hebb
// bench (their first maxEdgeConcepts concepts pairwise), then reads the
// strongest neighbours of frequent concepts as a search expands them:
//
//	go test -run '^$' -bench EdgesWithin -benchtime 3x ./raftfsm/
func BenchmarkEdgesWithin(b *testing.B) {
	const n = 50_000
	concepts := make([][]string, n)
	for i := range concepts {
		concepts[i] = embedder.Concepts(benchText.Text(bench.StreamPopulate, uint64(i)), 16)
	}
	build := func() *edgeSet {
		s := newEdgeSet()
		for i, c := range concepts {
			s.coactivateWithin(c, int64(i))
		}
		return &s
	}
	b.Run("write", func(b *testing.B) {
		var s *edgeSet
		for b.Loop() {
			s = build()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n)/1000, "us/atom")
		b.ReportMetric(float64(s.count)/n, "edges/atom")
	})
	b.Run("neighbours", func(b *testing.B) {
		s := build()
		i := 0
		for b.Loop() {
			for _, c := range concepts[i%n][:4] {
				s.neighbours(c, edgeTopFloor, maxEdgeConcepts+8)
			}
			i++
		}
	})
}
