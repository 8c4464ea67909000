package raftfsm

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/hebbdb/hebb/bench"
	"github.com/hebbdb/hebb/router/embedder"
)

// BenchmarkReadPipeline is a whole read as the router asks for it (top 10,
// query concepts, associations on) in a tenant of 100k atoms of hebb
// bench's texts with their within-atom edges, over 10 domains, unfiltered
// and with a metadata filter no atom satisfies:
//
//	go test -run '^$' -bench ReadPipeline -benchtime 300x ./raftfsm/
func BenchmarkReadPipeline(b *testing.B) {
	f := builtState(b, 100_000, 10, true)
	queries := make([]string, 200)
	for i := range queries {
		queries[i] = benchText.Query(bench.StreamPopulate, 100_000, uint64(i))
	}
	vecs, err := benchEmbedder().Embed(context.Background(), queries)
	if err != nil {
		b.Fatal(err)
	}
	// A metadata filter no atom satisfies, at the default min_relevance
	// and at 0 (no floor: every row's weight is asked).
	none := []Condition{{"project", "eq", []byte(`"none"`)}}
	cases := []struct {
		name   string
		assoc  bool
		filter []Condition
		minRel float64
	}{
		{"associations=false", false, nil, 0.3},
		{"associations=true", true, nil, 0.3},
		{"filter=none", true, none, 0.3},
		{"filter=none/min_relevance=0", true, none, math.Inf(-1)},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var lat []time.Duration
			i := 0
			for b.Loop() {
				q := i % len(queries)
				start := time.Now()
				f.Read(&ReadRequest{Tenant: "org", Vector: vecs[q], Concepts: embedder.Concepts(queries[q], 16),
					TopK: 10, MinRelevance: c.minRel, IncludeAssociations: c.assoc, Filter: c.filter})
				lat = append(lat, time.Since(start))
				i++
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}
