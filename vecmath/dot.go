package vecmath

import (
	"fmt"

	"github.com/viterin/vek"
	"github.com/viterin/vek/vek32"
)

// accelerated reports whether vek runs its AVX2+FMA kernels on this CPU. It is
// read once at start-up; tests flip it to exercise the scalar path.
var accelerated = vek.Info().Acceleration

// Accelerated reports whether Dot and the kernels built on it use vek's SIMD
// code on this machine (false means the scalar fallback).
func Accelerated() bool { return accelerated }

// Dot returns sum(a[i]*b[i]) over min(len(a), len(b)) elements (callers pass
// equal lengths). It uses vek32.Dot when the CPU supports it and a scalar loop
// otherwise. Length 0 gives 0.
func Dot(a, b []float32) float32 {
	n := min(len(a), len(b))
	if n == 0 {
		return 0
	}
	if accelerated {
		return vek32.Dot(a[:n], b[:n])
	}
	return dotScalar(a[:n], b[:n])
}

// DotRef is the scalar reference for Dot: products and their running sum in
// float64, rounded to float32 once at the end. A float32 product is exact in
// float64, so the result does not depend on the platform or on whether the
// compiler fuses multiply-adds.
func DotRef(a, b []float32) float32 {
	n := min(len(a), len(b))
	var s float64
	for i := range n {
		s += float64(a[i]) * float64(b[i])
	}
	return float32(s)
}

// DotFixed is DotRef's dot product summed in another fixed order, one SIMD
// can follow: element i's product goes to float64 partial sum i mod 16, the
// sixteen sums are added in a fixed tree, the last len%16 products are added
// in order, and the result is rounded to float32 once. Products are exact in
// float64 and every addition is an IEEE double addition in that order, so
// the AVX2 kernel and the Go loop give the same bits on every CPU; and the
// result is within a few float64 roundings of DotRef's (which it equals but
// for the rare sum that lies within them of a float32 rounding boundary).
// The write gate uses it: it is several times faster than DotRef, whose one
// running sum waits on each addition.
func DotFixed(a, b []float32) float32 {
	n := min(len(a), len(b))
	m := n &^ 15
	var s float64
	if m > 0 {
		s = dotFixed(a[:m], b[:m])
	}
	for i := m; i < n; i++ {
		s += float64(a[i]) * float64(b[i])
	}
	return float32(s)
}

// dotFixedRef is DotFixed's kernel in Go: len(a) a multiple of 16, len(b)
// at least len(a).
func dotFixedRef(a, b []float32) float64 {
	b = b[:len(a)]
	var p [16]float64
	for i := 0; i < len(a); i += 16 {
		x, y := a[i:i+16], b[i:i+16]
		for l := range p {
			p[l] += float64(x[l]) * float64(y[l])
		}
	}
	var t [4]float64
	for l := range t {
		t[l] = (p[l] + p[l+4]) + (p[l+8] + p[l+12])
	}
	return (t[0] + t[2]) + (t[1] + t[3])
}

// dotScalar is Dot's fallback when vek has no SIMD kernel for this CPU: four
// independent float32 accumulators so the adds do not wait on each other.
// len(b) must be at least len(a).
func dotScalar(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// DotArena writes out[i] = Dot(q, row i) for i in [0, len(out)), where row i is
// arena[i*dim:(i+1)*dim]. It panics unless len(q) == dim and
// len(arena) >= len(out)*dim.
func DotArena(q, arena []float32, dim int, out []float32) {
	checkArena(len(q), len(arena), dim, len(out))
	if dim == 0 {
		clear(out)
		return
	}
	if accelerated {
		for i := range out {
			out[i] = vek32.Dot(q, arena[i*dim:(i+1)*dim])
		}
		return
	}
	for i := range out {
		out[i] = dotScalar(q, arena[i*dim:(i+1)*dim])
	}
}

// DotArenaRef is the scalar reference for DotArena, built on DotRef.
func DotArenaRef(q, arena []float32, dim int, out []float32) {
	checkArena(len(q), len(arena), dim, len(out))
	for i := range out {
		out[i] = DotRef(q, arena[i*dim:(i+1)*dim])
	}
}

// DotRows is DotArena restricted to the given row indices:
// out[j] = Dot(q, row rows[j]) for j in [0, len(rows)). It panics unless
// len(q) == dim, len(out) >= len(rows) and every row lies inside the arena.
func DotRows(q, arena []float32, dim int, rows []int32, out []float32) {
	checkRows(len(q), dim, len(rows), len(out))
	for j, r := range rows {
		out[j] = Dot(q, arenaRow(arena, dim, int(r)))
	}
}

// DotRowsRef is the scalar reference for DotRows, built on DotRef.
func DotRowsRef(q, arena []float32, dim int, rows []int32, out []float32) {
	checkRows(len(q), dim, len(rows), len(out))
	for j, r := range rows {
		out[j] = DotRef(q, arenaRow(arena, dim, int(r)))
	}
}

// arenaRow returns row i of the arena, panicking when it does not fit.
func arenaRow(arena []float32, dim, i int) []float32 {
	if i < 0 || (i+1)*dim > len(arena) {
		panic(fmt.Sprintf("vecmath: row %d outside an arena of %d floats with dim %d", i, len(arena), dim))
	}
	return arena[i*dim : (i+1)*dim]
}

// checkArena panics unless an n-row scan of the arena with a query of length
// qlen is well formed.
func checkArena(qlen, arenaLen, dim, n int) {
	if dim < 0 || n < 0 {
		panic(fmt.Sprintf("vecmath: negative dim %d or row count %d", dim, n))
	}
	if qlen != dim {
		panic(fmt.Sprintf("vecmath: query length %d != dim %d", qlen, dim))
	}
	if arenaLen < n*dim {
		panic(fmt.Sprintf("vecmath: arena of %d floats is shorter than %d rows of dim %d", arenaLen, n, dim))
	}
}

// checkRows panics unless a DotRows call is well formed.
func checkRows(qlen, dim, rows, out int) {
	if dim < 0 {
		panic(fmt.Sprintf("vecmath: negative dim %d", dim))
	}
	if qlen != dim {
		panic(fmt.Sprintf("vecmath: query length %d != dim %d", qlen, dim))
	}
	if out < rows {
		panic(fmt.Sprintf("vecmath: out holds %d scores, %d rows requested", out, rows))
	}
}
