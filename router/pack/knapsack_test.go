package pack

import (
	"math/rand/v2"
	"testing"
)

// bruteKnapsack is the reference: every subset.
func bruteKnapsack(costs []int, values []float64, capacity int) float64 {
	best := 0.0
	for mask := 0; mask < 1<<len(costs); mask++ {
		c, v := 0, 0.0
		for i := range costs {
			if mask&(1<<i) != 0 {
				c += costs[i]
				v += values[i]
			}
		}
		if c <= capacity && v > best {
			best = v
		}
	}
	return best
}

func TestKnapsackAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 300; trial++ {
		n := rng.IntN(12)
		costs := make([]int, n)
		values := make([]float64, n)
		for i := range costs {
			costs[i] = 1 + rng.IntN(40)
			values[i] = rng.Float64()
		}
		capacity := rng.IntN(150)
		picked := knapsack(costs, values, capacity)
		c, v := 0, 0.0
		for _, i := range picked {
			c += costs[i]
			v += values[i]
		}
		if c > capacity {
			t.Fatalf("trial %d: cost %d over capacity %d", trial, c, capacity)
		}
		if want := bruteKnapsack(costs, values, capacity); v < want-1e-9 {
			t.Fatalf("trial %d: value %g, optimum %g (costs %v values %v cap %d)", trial, v, want, costs, values, capacity)
		}
	}
}

func TestKnapsackScaledStaysFeasible(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	n := 400
	costs := make([]int, n)
	values := make([]float64, n)
	for i := range costs {
		costs[i] = 1 + rng.IntN(3000)
		values[i] = rng.Float64()
	}
	capacity := 200000
	picked := knapsack(costs, values, capacity)
	c := 0
	for _, i := range picked {
		c += costs[i]
	}
	if c > capacity || len(picked) == 0 {
		t.Fatalf("scaled knapsack picked %d items costing %d (capacity %d)", len(picked), c, capacity)
	}
}
