package vecmath

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestBounderBoundsDots: the bound of every row is at least its exact dot,
// and close to it.
func TestBounderBoundsDots(t *testing.T) {
	const dim, n = 96, 500
	rng := rand.New(rand.NewPCG(7, 7))
	q := NewQuantizer(dim)
	c := NewCodes(q)
	rows := make([][]float32, n)
	for i := range rows {
		rows[i] = randUnit(rng, dim)
		c.Append(rows[i])
	}
	b := NewBounder(q)
	for range 20 {
		vec := randUnit(rng, dim)
		b.Prepare(vec)
		for i, r := range rows {
			exact, ub := DotRef(vec, r), b.Upper(c, i)
			if ub < exact || ub > exact+0.5 {
				t.Fatalf("row %d: bound %v, exact %v", i, ub, exact)
			}
		}
	}
	b.Prepare(make([]float32, dim)) // zero: no bound
	if ub := b.Upper(c, 0); !math.IsInf(float64(ub), 1) {
		t.Fatalf("bound of a zero query %v, want +Inf", ub)
	}
}
