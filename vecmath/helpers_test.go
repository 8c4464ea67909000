package vecmath

import (
	"math"
	"math/rand/v2"
	"testing"
)

// hardwareSIMD is what vek detected, before any test flips accelerated.
var hardwareSIMD = accelerated

// hardwareAVX512 is whether the CPU has the AVX-512 kernels' subsets,
// before any test flips hasAVX512.
var hardwareAVX512 = hasAVX512

// forEachPath runs fn once with the SIMD path (when the CPU has it) and once
// with the scalar fallback, restoring the detected setting afterwards.
func forEachPath(t *testing.T, fn func(t *testing.T)) {
	t.Helper()
	for _, p := range []struct {
		name string
		simd bool
	}{{"simd", true}, {"scalar", false}} {
		t.Run(p.name, func(t *testing.T) {
			if p.simd && !hardwareSIMD {
				t.Skip("CPU has no AVX2+FMA; vek falls back to Go")
			}
			accelerated = p.simd
			t.Cleanup(func() { accelerated = hardwareSIMD })
			fn(t)
		})
	}
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)) }

// randVec returns n floats uniform in [-1, 1).
func randVec(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = r.Float32()*2 - 1
	}
	return v
}

// randUnit returns a random unit vector of length n (n > 0).
func randUnit(r *rand.Rand, n int) []float32 {
	for {
		v := randVec(r, n)
		if Normalize(v) > 0 {
			return v
		}
	}
}

// nearUnit returns a unit vector at about cosine cos from the unit vector
// vec: cos·vec plus a random unit vector weighted to make it unit, then
// normalised.
func nearUnit(r *rand.Rand, vec []float32, cos float32) []float32 {
	noise := randUnit(r, len(vec))
	row := make([]float32, len(vec))
	for j := range row {
		row[j] = cos*vec[j] + float32(math.Sqrt(float64(1-cos*cos)))*noise[j]
	}
	Normalize(row)
	return row
}

// dotExpect describes what any correct float32 dot of a and b must return:
// the class of the result (NaN, ±Inf, finite) and, when finite, a value with
// an error bound valid for every summation order, with or without FMA.
type dotExpect struct {
	class    string // "nan", "+inf", "-inf", "finite" or "any" (order-dependent overflow)
	value    float64
	errBound float64
}

func expectDot(a, b []float32) dotExpect {
	n := min(len(a), len(b))
	var sum, abs, finiteAbs float64
	for i := range n {
		p := float64(a[i]) * float64(b[i]) // exact for float32 inputs
		sum += p
		if !math.IsInf(p, 0) && !math.IsNaN(p) {
			finiteAbs += math.Abs(p)
		}
		abs += math.Abs(p)
	}
	// Partial sums of finite products stay below finiteAbs*(1+tiny); past half
	// of MaxFloat32 some order may overflow and the outcome depends on it.
	if finiteAbs > math.MaxFloat32/2 {
		return dotExpect{class: "any"}
	}
	switch {
	case math.IsNaN(sum):
		return dotExpect{class: "nan"}
	case math.IsInf(sum, 1):
		return dotExpect{class: "+inf"}
	case math.IsInf(sum, -1):
		return dotExpect{class: "-inf"}
	}
	// Each of at most n+8 roundings in a float32 summation tree errs by at most
	// 2^-24 of a partial sum bounded by abs; underflowing products add at most
	// 2^-150 each.
	bound := float64(n+8)*math.Ldexp(abs, -23) + float64(n)*math.Ldexp(1, -149)
	return dotExpect{class: "finite", value: sum, errBound: bound}
}

func (e dotExpect) check(t *testing.T, what string, got float32) {
	t.Helper()
	g := float64(got)
	ok := true
	switch e.class {
	case "any":
	case "nan":
		ok = math.IsNaN(g)
	case "+inf":
		ok = math.IsInf(g, 1)
	case "-inf":
		ok = math.IsInf(g, -1)
	default:
		ok = !math.IsNaN(g) && !math.IsInf(g, 0) && math.Abs(g-e.value) <= e.errBound
	}
	if !ok {
		t.Fatalf("%s = %v, want %s %v ± %g", what, got, e.class, e.value, e.errBound)
	}
}

// randRows returns n random unit rows of dim, each passed to edit (by
// index) to make some special.
func randRows(r *rand.Rand, n, dim int, edit func(i int, v []float32)) [][]float32 {
	rows := make([][]float32, n)
	for i := range rows {
		rows[i] = randUnit(r, dim)
		edit(i, rows[i])
	}
	return rows
}
