package raftfsm

import (
	"fmt"
	"math/rand"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// TestFanoutThen: every task runs once; then runs once, on another
// goroutine (a helper once it finds no task left, or its own when there is
// no helper), and the caller returns without waiting for it.
func TestFanoutThen(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{2, 4} {
		runtime.GOMAXPROCS(procs)
		for _, n := range []int{1, 2, 3, 17, 100} {
			counts := make([]atomic.Int32, n)
			var thens atomic.Int32
			release, ran := make(chan struct{}), make(chan struct{}, 8)
			fanoutThen(n, func(i int) { counts[i].Add(1); time.Sleep(50 * time.Microsecond) }, func() {
				thens.Add(1)
				<-release // held until the caller has returned
				ran <- struct{}{}
			})
			for i := range counts {
				if c := counts[i].Load(); c != 1 {
					t.Fatalf("procs %d n %d: task %d ran %d times", procs, n, i, c)
				}
			}
			close(release)
			select {
			case <-ran:
			case <-time.After(10 * time.Second):
				t.Fatalf("procs %d n %d: then did not run", procs, n)
			}
			time.Sleep(time.Millisecond) // time for a second run to show
			if c := thens.Load(); c != 1 {
				t.Fatalf("procs %d n %d: then ran %d times", procs, n, c)
			}
		}
	}
}

// TestParallelReadsMatchExact: reads spread over the cores, whose stages
// beside the ranking a scan helper may start (search.helper), give what
// exact scans give, concepts and associations included.
func TestParallelReadsMatchExact(t *testing.T) {
	const dim = 64
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	withCodedRows(t, 64)
	old := parallelRows
	parallelRows = 2048
	t.Cleanup(func() { parallelRows = old })
	f := codedTenant(t, 5, dim, 5000, []string{"a", "b", "c"})
	tn := f.tenants["org"]
	for i := range 200 { // edges strong enough to expand
		tn.edges.touch(fmt.Sprint("c", i%50), fmt.Sprint("c", (i*7+3)%50), 0.3, 0, false, 1)
	}
	rng := rand.New(rand.NewSource(6))
	for i := range 60 {
		req := &ReadRequest{Tenant: "org", Vector: randomUnit(rng, dim), TopK: 1 + rng.Intn(15),
			MinRelevance: []float64{-1, 0, 0.1}[i%3], IncludeAssociations: i%4 != 3}
		for range 1 + rng.Intn(3) {
			req.Concepts = append(req.Concepts, fmt.Sprint("c", rng.Intn(50)))
		}
		req.Concepts = dedupe(req.Concepts)
		if i%5 == 0 {
			req.Domains = []string{"a", "b"}
		}
		if d := codedVsExact(f, req); d != "" {
			t.Fatalf("request %d: %s", i, d)
		}
		if res := f.Read(req); req.IncludeAssociations && i < 8 && len(res.Expanded) == 0 {
			t.Fatalf("request %d: no concept expanded; the test does not reach the associations", i)
		}
	}
}
