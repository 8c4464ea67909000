package raftfsm

import (
	"fmt"
	"math/rand"
	"testing"
)

// TestQuantisedFilteredReadsMatchExact: reads under metadata filters
// through the codes, where rows are ruled out by their metadata signature
// before they are weighed, return what exact scans return (which match
// every atom), also after deletes have moved rows and their signatures.
func TestQuantisedFilteredReadsMatchExact(t *testing.T) {
	const dim = 64
	withCodedRows(t, 64)
	withArenaRows(t, 256) // many blocks: signatures read at block offsets
	rng := rand.New(rand.NewSource(5))
	f := New(dim)
	n := 4000
	for i := 0; i < n; i += 100 {
		cmd := &WriteCmd{Tenant: "org", Batch: true}
		for j := i; j < i+100; j++ {
			cmd.Items = append(cmd.Items, WriteItem{ID: mkID(j + 1), CreatedAt: baseTime + int64(j),
				Content: fmt.Sprint("atom ", j), Domain: []string{"a", "b"}[j%2], Metadata: filterTestMeta(j),
				Concepts: []string{fmt.Sprint("c", rng.Intn(50))}, Vector: randomUnit(rng, dim)})
		}
		f.Apply(uint64(i+1), cmd.Encode())
	}
	for k := 0; k < 400; k++ {
		f.Apply(uint64(n+k+1), (&DeleteAtomCmd{Tenant: "org", ID: mkID(1 + rng.Intn(n))}).Encode())
	}
	filters := [][]Condition{
		{{"project", "eq", []byte(`"p3"`)}},
		{{"project", "eq", []byte(`"none"`)}},
		{{"project", "in", []byte(`["p1","p2","zz"]`)}},
		{{"n", "eq", []byte(`2.0`)}},
		{{"n", "in", []byte(`[1e0, 4]`)}},
		{{"tags", "contains", []byte(`"t1"`)}},
		{{"tags", "contains", []byte(`"none"`)}},
		{{"project", "contains", []byte(`"1"`)}},
		{{"tags", "contains", []byte(`2`)}},
		{{"o.k", "eq", []byte(`1`)}},
		{{"flag", "eq", []byte(`true`)}},
		{{"project", "eq", []byte(`"p5"`)}, {"n", "eq", []byte(`0`)}},
		{{"project", "in", []byte(`[{"x":1},"p4"]`)}},
	}
	// A restore computes the signatures afresh, from the snapshot's atoms.
	g := restored(t, snapshotBytes(t, f), dim)
	for i, flt := range filters {
		for _, minRel := range []float64{-1, 0, 0.1} {
			req := &ReadRequest{Tenant: "org", Vector: randomUnit(rng, dim), TopK: 1 + rng.Intn(20),
				MinRelevance: minRel, Filter: flt}
			if i%3 == 1 {
				req.Domains = []string{"b"}
			}
			if d := codedVsExact(f, req); d != "" {
				t.Fatalf("filter %d, min_relevance %v: %s", i, minRel, d)
			}
			if d := diffItems(g.Read(req).Items, f.Read(req).Items); d != "" {
				t.Fatalf("filter %d, min_relevance %v, restored: %s", i, minRel, d)
			}
		}
	}
}

// filterTestMeta is varied metadata for atom j: none, escaped and repeated
// keys, numbers in several notations, nested objects and arrays.
func filterTestMeta(j int) []byte {
	switch j % 9 {
	case 0:
		return nil
	case 1:
		return []byte(fmt.Sprintf(`{"pro\u006aect":"p%d","n":%d.0}`, j%13, j%5))
	case 2:
		return []byte(fmt.Sprintf(`{"project":"stale","project":"p%d","flag":true}`, j%13))
	case 3:
		return []byte(`[1,2]`)
	}
	if j%9 == 4 {
		return []byte(fmt.Sprintf(`{"project":"p%d","tags":[%d, 2.0e0, {"a":1}, "t\u0031"]}`, j%13, j%3))
	}
	return []byte(fmt.Sprintf(`{"project":"p%d","n":%de0,"tags":["t%d","x"],"o":{"k":%d}}`, j%13, j%5, j%3, j%4))
}
