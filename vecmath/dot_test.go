package vecmath

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

var (
	nan  = float32(math.NaN())
	inf  = float32(math.Inf(1))
	ninf = float32(math.Inf(-1))
)

func TestDotMatchesReference(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		r := newRand(1)
		for n := 0; n <= 257; n++ {
			for rep := 0; rep < 3; rep++ {
				a, b := randVec(r, n), randVec(r, n)
				e := expectDot(a, b)
				e.check(t, fmt.Sprintf("Dot(n=%d)", n), Dot(a, b))
				e.check(t, fmt.Sprintf("DotRef(n=%d)", n), DotRef(a, b))
				e.check(t, fmt.Sprintf("dotScalar(n=%d)", n), dotScalar(a, b))
			}
		}
	})
}

func TestDotExactCases(t *testing.T) {
	ones := func(n int, x float32) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = x
		}
		return v
	}
	cases := []struct {
		name string
		a, b []float32
		want float32
	}{
		{"empty", nil, nil, 0},
		{"one empty", []float32{1, 2}, nil, 0},
		{"zero vectors", make([]float32, 257), make([]float32, 257), 0},
		{"zero times ones", make([]float32, 100), ones(100, 1), 0},
		{"ones 257", ones(257, 1), ones(257, 1), 257},
		{"halves 64", ones(64, 0.5), ones(64, 0.5), 16},
		{"unequal lengths use the shorter", []float32{1, 2, 3}, []float32{4, 5}, 14},
		{"unit self", []float32{0.6, 0.8}, []float32{0.6, 0.8}, 1},
	}
	forEachPath(t, func(t *testing.T) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				if got := Dot(c.a, c.b); got != c.want {
					t.Errorf("Dot = %v, want %v", got, c.want)
				}
				if got := DotRef(c.a, c.b); got != c.want {
					t.Errorf("DotRef = %v, want %v", got, c.want)
				}
			})
		}
	})
}

// TestDotNonFinite plants NaN and Inf at the start, middle and end of vectors
// whose lengths hit vek's 32-wide block and its scalar tail.
func TestDotNonFinite(t *testing.T) {
	plant := []struct {
		name   string
		x, y   float32 // x goes into a, y into b at the same position
		x2, y2 float32 // a second planting, 0/0 for none
		want   string
	}{
		{"NaN in a", nan, 0.5, 0, 0, "nan"},
		{"NaN in b", 0.5, nan, 0, 0, "nan"},
		{"+Inf times positive", inf, 0.5, 0, 0, "+inf"},
		{"+Inf times negative", inf, -0.5, 0, 0, "-inf"},
		{"-Inf times positive", ninf, 0.5, 0, 0, "-inf"},
		{"Inf times zero", inf, 0, 0, 0, "nan"},
		{"+Inf and -Inf products", inf, 1, ninf, 1, "nan"},
		{"two +Inf products", inf, 1, inf, 2, "+inf"},
	}
	forEachPath(t, func(t *testing.T) {
		r := newRand(2)
		for _, p := range plant {
			for _, n := range []int{1, 2, 7, 31, 32, 33, 64, 100, 257} {
				if p.x2 != 0 && n < 2 {
					continue // needs two positions
				}
				for _, pos := range slices.Compact([]int{0, n / 2, n - 1}) {
					t.Run(fmt.Sprintf("%s/n=%d/pos=%d", p.name, n, pos), func(t *testing.T) {
						a, b := randVec(r, n), randVec(r, n)
						a[pos], b[pos] = p.x, p.y
						if p.x2 != 0 {
							q := (pos + 1) % n
							a[q], b[q] = p.x2, p.y2
						}
						e := expectDot(a, b)
						if e.class != p.want {
							t.Fatalf("test setup: expected class %s, reference says %s", p.want, e.class)
						}
						e.check(t, "Dot", Dot(a, b))
						e.check(t, "DotRef", DotRef(a, b))
					})
				}
			}
		}
	})
}

func TestDotArena(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		r := newRand(3)
		for _, dim := range []int{0, 1, 3, 8, 31, 32, 33, 100, 384} {
			for _, rows := range []int{0, 1, 5, 17} {
				t.Run(fmt.Sprintf("dim=%d/rows=%d", dim, rows), func(t *testing.T) {
					q := randVec(r, dim)
					arena := randVec(r, rows*dim+dim/2) // spare floats past the rows
					out, ref := make([]float32, rows), make([]float32, rows)
					DotArena(q, arena, dim, out)
					DotArenaRef(q, arena, dim, ref)
					for i := range rows {
						row := arena[i*dim : (i+1)*dim]
						if want := Dot(q, row); out[i] != want {
							t.Fatalf("DotArena[%d] = %v, Dot = %v", i, out[i], want)
						}
						if want := DotRef(q, row); ref[i] != want {
							t.Fatalf("DotArenaRef[%d] = %v, DotRef = %v", i, ref[i], want)
						}
						expectDot(q, row).check(t, fmt.Sprintf("DotArena[%d]", i), out[i])
					}
				})
			}
		}
	})
}

func TestDotRows(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		r := newRand(4)
		const dim, n = 40, 30
		q, arena := randVec(r, dim), randVec(r, n*dim)
		rows := []int32{29, 0, 5, 5, 17, 0}
		out := make([]float32, len(rows)+2) // longer than rows: the tail is untouched
		out[len(rows)] = 42
		ref := make([]float32, len(rows))
		DotRows(q, arena, dim, rows, out)
		DotRowsRef(q, arena, dim, rows, ref)
		for j, row := range rows {
			vec := arena[int(row)*dim : int(row+1)*dim]
			if want := Dot(q, vec); out[j] != want {
				t.Fatalf("DotRows[%d] = %v, Dot = %v", j, out[j], want)
			}
			expectDot(q, vec).check(t, fmt.Sprintf("DotRowsRef[%d]", j), ref[j])
		}
		if out[len(rows)] != 42 {
			t.Fatalf("DotRows wrote past len(rows)")
		}
		DotRows(q, arena, dim, nil, nil) // no rows: no work, no panic
	})
}

func TestArenaPanics(t *testing.T) {
	q, arena := make([]float32, 4), make([]float32, 10)
	cases := []struct {
		name string
		fn   func()
	}{
		{"query length != dim", func() { DotArena(q[:3], arena, 4, make([]float32, 2)) }},
		{"arena too short", func() { DotArena(q, arena, 4, make([]float32, 3)) }},
		{"ref arena too short", func() { DotArenaRef(q, arena, 4, make([]float32, 3)) }},
		{"negative dim", func() { DotArena(nil, arena, -1, nil) }},
		{"row out of range", func() { DotRows(q, arena, 4, []int32{2}, make([]float32, 1)) }},
		{"negative row", func() { DotRows(q, arena, 4, []int32{-1}, make([]float32, 1)) }},
		{"out too short", func() { DotRows(q, arena, 4, []int32{0, 1}, make([]float32, 1)) }},
		{"nearest arena too short", func() { Nearest(q, arena, 4, 3, nil) }},
		{"nearest query length", func() { Nearest(q[:2], arena, 4, 1, nil) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			c.fn()
		})
	}
}

func TestNormalize(t *testing.T) {
	cases := []struct {
		name     string
		in       []float32
		wantNorm float32
		want     []float32 // nil: only check unit length
	}{
		{"empty", []float32{}, 0, []float32{}},
		{"zero", []float32{0, 0, 0}, 0, []float32{0, 0, 0}},
		{"3-4-5", []float32{3, 4}, 5, []float32{0.6, 0.8}},
		{"already unit", []float32{0, 1, 0}, 1, []float32{0, 1, 0}},
		{"negative", []float32{-2, 0}, 2, []float32{-1, 0}},
		{"NaN", []float32{1, nan, 2}, 0, []float32{0, 0, 0}},
		{"+Inf", []float32{1, inf}, 0, []float32{0, 0}},
		{"-Inf", []float32{ninf, 1}, 0, []float32{0, 0}},
		{"subnormal", []float32{3e-45, 4e-45}, 0, nil},
		{"huge", []float32{2e38, 1e38}, 0, nil},
		{"norm above MaxFloat32", []float32{3e38, 3e38}, inf, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := append([]float32(nil), c.in...)
			norm := Normalize(v)
			if c.want != nil {
				if norm != c.wantNorm {
					t.Errorf("norm = %v, want %v", norm, c.wantNorm)
				}
				for i := range v {
					if v[i] != c.want[i] {
						t.Fatalf("v = %v, want %v", v, c.want)
					}
				}
				return
			}
			if !(norm > 0) {
				t.Errorf("norm = %v, want > 0", norm)
			}
			if l := DotRef(v, v); math.Abs(float64(l)-1) > 1e-6 {
				t.Errorf("|v|^2 = %v after Normalize(%v) = %v", l, c.in, v)
			}
		})
	}
}

func TestNormalizeRandom(t *testing.T) {
	r := newRand(5)
	for n := 1; n <= 257; n++ {
		v := randVec(r, n)
		orig := append([]float32(nil), v...)
		norm := Normalize(v)
		want := math.Sqrt(float64(DotRef(orig, orig)))
		if math.Abs(float64(norm)-want) > 1e-6*want {
			t.Fatalf("n=%d: norm %v, want %v", n, norm, want)
		}
		if l := DotRef(v, v); math.Abs(float64(l)-1) > 1e-6 {
			t.Fatalf("n=%d: |v|^2 = %v", n, l)
		}
	}
}

// TestDotFixedSameOnEveryPath: the AVX2 kernel and the Go loop give the same
// bits (replicas with and without AVX2 must agree), and both are DotRef's
// sum to within float64 rounding.
func TestDotFixedSameOnEveryPath(t *testing.T) {
	r := newRand(7)
	type pair struct{ a, b []float32 }
	var cases []pair
	for n := 0; n <= 400; n += 1 + n/16 {
		for range 4 {
			cases = append(cases, pair{randVec(r, n), randVec(r, n)})
		}
	}
	// Wide ranges: large and tiny (subnormal) values, cancellations.
	for range 50 {
		a, b := randVec(r, 384), randVec(r, 384)
		for i := range a {
			a[i] *= float32(math.Ldexp(1, r.IntN(120)-60))
			b[i] *= float32(math.Ldexp(1, r.IntN(120)-60))
		}
		a[r.IntN(384)] = math.SmallestNonzeroFloat32
		cases = append(cases, pair{a, b}, pair{a, append(slices.Clone(a[:383]), -a[383])})
	}
	got := map[bool][]float32{}
	forEachPath(t, func(t *testing.T) {
		var out []float32
		for _, c := range cases {
			out = append(out, DotFixed(c.a, c.b))
		}
		got[accelerated] = out
	})
	if !hardwareSIMD {
		t.Skip("no AVX2 kernel to compare")
	}
	for i, c := range cases {
		// The float64 sums, before rounding hides most differences.
		if m := len(c.a) &^ 15; m > 0 {
			simd, scalar := dotFixed(c.a[:m], c.b[:m]), dotFixedRef(c.a[:m], c.b[:m])
			if math.Float64bits(simd) != math.Float64bits(scalar) {
				t.Fatalf("case %d (n=%d): AVX2 sum %v, Go sum %v", i, len(c.a), simd, scalar)
			}
		}
		simd, scalar := got[true][i], got[false][i]
		if math.Float32bits(simd) != math.Float32bits(scalar) {
			t.Fatalf("case %d (n=%d): AVX2 %v, Go %v", i, len(c.a), simd, scalar)
		}
		ref := DotRef(c.a, c.b)
		var mag float64
		for j := range c.a {
			mag += math.Abs(float64(c.a[j]) * float64(c.b[j]))
		}
		if d := math.Abs(float64(simd) - float64(ref)); d > math.Abs(float64(ref))*1.2e-7+mag*1e-12 {
			t.Fatalf("case %d (n=%d): DotFixed %v, DotRef %v", i, len(c.a), simd, ref)
		}
	}
}

func TestDotFixedCases(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		ones := make([]float32, 257)
		for i := range ones {
			ones[i] = 1
		}
		for n, want := range map[int]float32{0: 0, 1: 1, 15: 15, 16: 16, 17: 17, 257: 257} {
			if got := DotFixed(ones[:n], ones[:n]); got != want {
				t.Errorf("n=%d: %v, want %v", n, got, want)
			}
		}
		if got := DotFixed([]float32{1, 2, 3}, []float32{4, 5}); got != 14 {
			t.Errorf("unequal lengths: %v", got)
		}
		a := make([]float32, 32)
		a[20] = nan
		if got := DotFixed(a, ones); got == got {
			t.Errorf("NaN lost: %v", got)
		}
	})
}
