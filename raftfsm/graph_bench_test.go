package raftfsm

import (
	"fmt"
	"testing"
)

// BenchmarkGraphHub walks from 4 hub seeds, each with 25k edges most of
// them under edgeTopFloor, with Graph's defaults (depth 1, no floor, limit
// 100) and at depth 2 (floor 0.05, limit 500); fullsort is the walk as it
// was, sorting every hub's whole adjacency:
//
//	go test -run '^$' -bench GraphHub ./raftfsm/
func BenchmarkGraphHub(b *testing.B) {
	s := newEdgeSet()
	for h := range 4 {
		hub := fmt.Sprintf("hub%d", h)
		for i := range 25_000 {
			c := fmt.Sprintf("c%05d", i)
			for range 1 + i%3 {
				s.touch(hub, c, writeEta, 0, false, int64(i))
			}
		}
	}
	seeds := []string{"hub0", "hub1", "hub2", "hub3"}
	for _, req := range []*GraphRequest{
		{Seeds: seeds, Depth: 1, Limit: 100},
		{Seeds: seeds, Depth: 2, MinWeight: 0.05, Limit: 500},
	} {
		name := fmt.Sprintf("depth%d", req.Depth)
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				s.walk(req)
			}
		})
		b.Run(name+"/fullsort", func(b *testing.B) {
			for b.Loop() {
				fullSortWalk(req, func(c string, min float64) []*edgeRec { return s.neighbours(c, min, 0) }, s.edge)
			}
		})
	}
}
