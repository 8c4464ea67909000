package raftfsm

import (
	"fmt"
	"math"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
)

// Batched writes run their gates under the read lock: searches running at
// the same time must see either the state before a batch or after it, and
// the race detector must find nothing.
func TestReadsDuringBatchedWrites(t *testing.T) {
	const dim = 32
	withCodedRows(t, 64)
	f := New(dim)
	rng := rand.New(rand.NewSource(4))
	batch := func(b int) *WriteCmd {
		cmd := &WriteCmd{Tenant: "org", Batch: true}
		for i := range 100 {
			n := b*100 + i
			cmd.Items = append(cmd.Items, WriteItem{ID: mkID(n + 1), CreatedAt: baseTime + int64(n),
				Content: fmt.Sprint("atom ", n), Domain: fmt.Sprint("d", n%3), Vector: randomUnit(rng, dim)})
		}
		return cmd
	}
	f.Apply(1, batch(0).Encode())
	queries := make([][]float32, 16)
	for i := range queries {
		queries[i] = randomUnit(rng, dim)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var bad atomic.Int64
	for r := range 3 {
		wg.Go(func() {
			for i := r; !stop.Load(); i++ {
				res := f.Read(&ReadRequest{Tenant: "org", Vector: queries[i%len(queries)], TopK: 10, MinRelevance: -1})
				// Every batch adds 100 atoms, so a consistent state always
				// has at least ten to return.
				if len(res.Items) != 10 {
					bad.Add(1)
				}
				for _, it := range res.Items {
					if it.Atom.ID.IsZero() || math.IsNaN(it.Relevance) {
						bad.Add(1)
					}
				}
			}
		})
	}
	for b := 1; b <= 30; b++ {
		res := f.Apply(uint64(b+1), batch(b).Encode()).(*WriteResults)
		if res.Err != nil {
			t.Fatalf("batch %d: %v", b, res.Err)
		}
	}
	stop.Store(true)
	wg.Wait()
	if n := bad.Load(); n > 0 {
		t.Fatalf("%d inconsistent reads", n)
	}
	if got := f.tenants["org"].atomCount(); got != 3100 {
		t.Fatalf("%d atoms, want 3100", got)
	}
}
