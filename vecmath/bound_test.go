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

// TestUpperEach: the bounds of rows scattered over several codes, in any
// order, are Upper's, exact-only rows included.
func TestUpperEach(t *testing.T) {
	const dim = 64
	rng := rand.New(rand.NewPCG(8, 8))
	q := NewQuantizer(dim)
	sets := make([]*Codes, 3)
	for i := range sets {
		sets[i] = NewCodes(q)
		for range 40 + 30*i {
			sets[i].Append(randUnit(rng, dim))
		}
	}
	bad := make([]float32, dim)
	bad[3] = float32(math.NaN())
	sets[1].Append(bad) // exact-only
	b := NewBounder(q)
	b.Prepare(randUnit(rng, dim))
	var codes []*Codes
	var rows []int32
	for range 101 { // more than one run of upperRun
		c := sets[rng.IntN(len(sets))]
		codes, rows = append(codes, c), append(rows, int32(rng.IntN(c.Len())))
	}
	codes, rows = append(codes, sets[1]), append(rows, int32(sets[1].Len()-1))
	out := make([]float32, len(rows))
	b.UpperEach(codes, rows, out)
	for i := range rows {
		if want := b.Upper(codes[i], int(rows[i])); out[i] != want {
			t.Fatalf("row %d of its codes: %v, want %v", rows[i], out[i], want)
		}
	}
	if !math.IsInf(float64(out[len(out)-1]), 1) {
		t.Fatalf("exact-only row bounded at %v", out[len(out)-1])
	}
}
